import { Context, Effect, Layer, Option } from "effect"
import type { Candidate } from "../leaderboards/index.ts"
import { type WorkspaceId, SecretCipher } from "../shared/index.ts"
import type { ChatTarget } from "./ChatProvider.ts"
import { IntegrationRepository } from "../integrations/index.ts"

/** Candidates called over chat completions; Service candidates are served by the models work instead. */
export type CallableCandidate = Candidate & { readonly platform: ChatTarget["platform"] }

export const isCallable = (candidate: Candidate): candidate is CallableCandidate => candidate.platform !== "Service"

/**
 * How to call a candidate: its platform, model and endpoint, and its credential — its own token,
 * else (Router and Hub) the workspace's integration token, else none. Inference and human
 * evaluation's generation call candidates the same way.
 */
export class ChatTargets extends Context.Service<ChatTargets, {
  readonly of: (
    candidate: CallableCandidate,
    workspaceId: WorkspaceId,
    /** Sealed credentials of the leaderboard's candidates, by candidate id. */
    credentials: ReadonlyMap<string, string>
  ) => Effect.Effect<ChatTarget>
  /** A judge model (`judge_provider` router or hub, `judge_model`), called with the workspace's integration token. */
  readonly judge: (provider: "router" | "hub", model: string, workspaceId: WorkspaceId) => Effect.Effect<ChatTarget>
}>()("@podium/domain/inference/ChatTargets") {
  static readonly layer = Layer.effect(
    ChatTargets,
    Effect.gen(function*() {
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher

      const integrationToken = Effect.fnUntraced(function*(workspaceId: WorkspaceId, provider: "router" | "hub") {
        const integration = yield* integrations.find(workspaceId, provider)
        return Option.isSome(integration) ? Option.some(yield* cipher.open(integration.value.sealed_token)) : Option.none()
      })

      const credential = Effect.fnUntraced(function*(
        candidate: Candidate,
        workspaceId: WorkspaceId,
        credentials: ReadonlyMap<string, string>
      ) {
        const own = credentials.get(candidate.id)
        if (own !== undefined) return Option.some(yield* cipher.open(own))
        if (candidate.platform !== "Router" && candidate.platform !== "Hub") return Option.none()
        return yield* integrationToken(workspaceId, candidate.platform === "Router" ? "router" : "hub")
      })

      return ChatTargets.of({
        judge: Effect.fnUntraced(function*(provider, model, workspaceId) {
          return {
            candidateId: `judge:${provider}:${model}`,
            candidateName: `${provider}:${model}`,
            platform: provider === "router" ? "Router" : "Hub",
            modelName: model,
            url: null,
            authType: "bearer",
            authHeaderName: null,
            token: yield* integrationToken(workspaceId, provider),
            inputPricePerMTokens: null,
            outputPricePerMTokens: null
          } satisfies ChatTarget
        }),
        of: Effect.fnUntraced(function*(candidate, workspaceId, credentials) {
          return {
            candidateId: candidate.id,
            candidateName: candidate.name,
            platform: candidate.platform,
            modelName: candidate.model_name,
            url: candidate.url,
            authType: candidate.auth_type,
            authHeaderName: candidate.auth_header_name,
            token: yield* credential(candidate, workspaceId, credentials),
            inputPricePerMTokens: candidate.input_price_per_m_tokens,
            outputPricePerMTokens: candidate.output_price_per_m_tokens
          } satisfies ChatTarget
        })
      })
    })
  )
}
