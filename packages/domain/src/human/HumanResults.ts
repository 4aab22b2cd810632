import { Context, Effect, Layer } from "effect"
import type { Candidate, LeaderboardId } from "../leaderboards/index.ts"
import type { Principal } from "../access/index.ts"
import { limits } from "./HumanEval.ts"
import { type ExportRow, exportRow } from "./CaseResults.ts"
import { fromTallies, type Ranking } from "./HumanRanking.ts"
import { HumanAccess, type HumanAccessError } from "./HumanAccess.ts"
import { type CaseCounts, type CaseListItem, HumanCaseRepository } from "./HumanCaseRepository.ts"

export interface Summary extends CaseCounts {
  readonly default_prompt: string
  readonly cohort: ReadonlyArray<Pick<Candidate, "id" | "name" | "platform" | "model_name">>
  readonly candidate_count: number
  readonly ranking: Ranking
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
        const [counts, page, tallies] = yield* Effect.all([
          cases.counts(leaderboardId, configuration),
          cases.page(leaderboardId, configuration, { offset, limit: limits.summaryPage }),
          cases.tallies(leaderboardId, configuration, candidates.map((c) => c.id))
        ], { concurrency: "unbounded" })
        return {
          ...counts,
          default_prompt: basePrompt,
          cohort: candidates.map(({ id, model_name, name, platform }) => ({ id, name, platform, model_name })),
          candidate_count: candidates.length,
          ranking: fromTallies(candidates, tallies),
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
