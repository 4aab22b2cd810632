import { Context, Effect, Layer } from "effect"
import { type Candidate, type LeaderboardId, type ServingDecision, servingPolicyOf } from "../leaderboards/index.ts"
import type { Principal } from "../access/index.ts"
import { limits } from "./HumanEval.ts"
import { type ExportRow, exportRow } from "./CaseResults.ts"
import { fromTallies, type Ranking } from "./HumanRanking.ts"
import { commonVerdicts, type HumanPaired, humanServing } from "./HumanServing.ts"
import { HumanAccess, type HumanAccessError } from "./HumanAccess.ts"
import { type CaseCounts, type CaseListItem, HumanCaseRepository } from "./HumanCaseRepository.ts"

export interface Summary extends CaseCounts {
  readonly default_prompt: string
  readonly cohort: ReadonlyArray<Pick<Candidate, "id" | "name" | "platform" | "model_name">>
  readonly candidate_count: number
  /** The ranking, with the paired comparison over its common rows' cases at the policy's alpha. */
  readonly ranking: Ranking & { readonly paired: HumanPaired }
  /** What the serving policy decides now on the common rows, the ranking's winner being the serving one. */
  readonly serving_decision: ServingDecision
  readonly cases: ReadonlyArray<CaseListItem>
  readonly next_offset: number | null
}

/** What the reviews add up to: the ranking and progress of the current configuration, and the export. */
export class HumanResults extends Context.Service<HumanResults, {
  readonly summary: (principal: Principal, leaderboardId: LeaderboardId, offset: number) => Effect.Effect<Summary, HumanAccessError>
  /** Reference rows of the confirmed cases, across configurations (spec: `GET H/export`). */
  readonly exportRows: (
    principal: Principal,
    leaderboardId: LeaderboardId
  ) => Effect.Effect<ReadonlyArray<ExportRow & { readonly current: boolean }>, HumanAccessError>
}>()("@podium/domain/human/HumanResults") {
  static readonly layer = Layer.effect(
    HumanResults,
    Effect.gen(function*() {
      const access = yield* HumanAccess
      const cases = yield* HumanCaseRepository

      const summary = Effect.fn("HumanResults.summary")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        offset: number
      ) {
        const { basePrompt, configuration, serving } = yield* access.open(principal, leaderboardId)
        const candidates = serving.candidates
        const [counts, page, tallies, verdictCases] = yield* Effect.all([
          cases.counts(leaderboardId, configuration),
          cases.page(leaderboardId, configuration, { offset, limit: limits.summaryPage }),
          cases.tallies(leaderboardId, configuration, candidates.map((c) => c.id)),
          cases.verdictCases(leaderboardId, configuration)
        ], { concurrency: "unbounded" })
        const ranking = fromTallies(candidates, tallies)
        const { decision, paired } = humanServing({
          candidates,
          ranking,
          verdicts: commonVerdicts(candidates, verdictCases),
          policy: servingPolicyOf(serving.leaderboard),
          serving: serving.ranking_winner
        })
        return {
          ...counts,
          default_prompt: basePrompt,
          cohort: candidates.map(({ id, model_name, name, platform }) => ({ id, name, platform, model_name })),
          candidate_count: candidates.length,
          ranking: { ...ranking, paired },
          serving_decision: decision,
          cases: page,
          next_offset: offset + page.length < counts.total ? offset + page.length : null
        } satisfies Summary
      })

      const exportRows = Effect.fn("HumanResults.exportRows")(function*(principal: Principal, leaderboardId: LeaderboardId) {
        const { configuration } = yield* access.open(principal, leaderboardId)
        return (yield* cases.confirmed(leaderboardId)).flatMap((c) => {
          const row = exportRow(c)
          return row === undefined ? [] : [{ ...row, current: row.configuration === configuration }]
        })
      })

      return HumanResults.of({ summary, exportRows })
    })
  )
}
