import { Context, Effect, Layer, Option } from "effect"
import { Forbidden, type Principal } from "../access/index.ts"
import { type IntegrationUnavailable, IntegrationRepository } from "../integrations/index.ts"
import {
  type Candidate,
  checkUpdate,
  type LeaderboardArchived,
  type LeaderboardId,
  Leaderboards
} from "../leaderboards/index.ts"
import { type InvalidInput, type NotFound, SecretCipher, truncateText } from "../shared/index.ts"
import { type AutoSelectRequest, autoSelect, type RejectedBy, RouterIntegrationMissing, rulesOf } from "./AutoSelect.ts"
import { RouterCatalogue } from "./RouterCatalogue.ts"

export interface AutoSelectResult {
  /** The candidates added, cheapest first. */
  readonly added: ReadonlyArray<Candidate>
  /** Models of the router's catalogue looked at. */
  readonly considered: number
  readonly rejected_by: RejectedBy
}

/** Longest candidate name the HTTP contract accepts when adding one by hand. */
const maxNameLength = 200

/**
 * Adds the cheapest router models that pass the caller's limits as Router candidates of a
 * leaderboard, all in one write, through `Leaderboards.addCandidates`, so the candidate rules and change
 * notification are those of a candidate added by hand. Needs a session of a member of the
 * leaderboard's workspace and that workspace's router integration (its token reads the catalogue).
 */
export class AutoSelection extends Context.Service<AutoSelection, {
  readonly select: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    request: AutoSelectRequest
  ) => Effect.Effect<
    AutoSelectResult,
    Forbidden | NotFound | InvalidInput | LeaderboardArchived | RouterIntegrationMissing | IntegrationUnavailable
  >
}>()("@podium/domain/runs/AutoSelection") {
  static readonly layer = Layer.effect(
    AutoSelection,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher
      const catalogue = yield* RouterCatalogue

      const select = Effect.fn("AutoSelection.select")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        request: AutoSelectRequest
      ) {
        const rules = yield* Effect.fromResult(rulesOf(request))
        if (principal._tag !== "SessionPrincipal") {
          return yield* new Forbidden({ message: "Auto-select needs a signed-in user session" })
        }
        const { candidates, leaderboard } = yield* leaderboards.get(principal, leaderboardId)
        // before any router call: an archived leaderboard takes no candidates
        yield* Effect.fromResult(checkUpdate(leaderboard, { changesOtherFields: true }))
        const integration = yield* integrations.find(leaderboard.workspace_id, "router")
        if (Option.isNone(integration)) {
          return yield* new RouterIntegrationMissing({ workspace_id: leaderboard.workspace_id })
        }
        const token = yield* cipher.open(integration.value.sealed_token)
        const models = yield* catalogue.models(token)
        const existing = new Set(
          candidates.flatMap((c) => c.platform === "Router" && c.model_name !== null ? [c.model_name] : [])
        )
        const selection = yield* autoSelect(models, rules, existing, (model) => catalogue.latency(model.id, token))
        // all or none: a candidate that cannot be stored leaves no partial set behind
        const added = yield* leaderboards.addCandidates(principal, leaderboardId, selection.chosen.map((model) => ({
          platform: "Router",
          name: truncateText(model.name, maxNameLength),
          model_name: model.id,
          input_price_per_m_tokens: model.input_price_per_m_tokens,
          output_price_per_m_tokens: model.output_price_per_m_tokens
        })))
        return { added, considered: selection.considered, rejected_by: selection.rejected_by }
      })

      return AutoSelection.of({ select })
    })
  )
}
