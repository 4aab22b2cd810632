import { Context, Effect } from "effect"
import type { WorkspaceId } from "../shared/index.ts"
import { type ChatCompletion, ChatProviderFailed, type ChatRequest } from "./ChatProvider.ts"

export interface ServiceModelAnswer extends ChatCompletion {
  /** The model's version that answered. */
  readonly version_id: string
}

/**
 * Service candidates' answers: a model of the workspace answers through its deployed version, in
 * this process (the models context serves it and logs the call in the model's inference log; the
 * caller traces and budgets it, as it does any candidate). A model that is not the workspace's,
 * has no successful fine-tune or no active deployment fails like an upstream would
 * (`upstream_status` 404 or 409, with the reason), so callers treat it as any failing candidate.
 *
 * The default serves no model (every call fails 409): a composition without the models context
 * leaves Service candidates uncallable rather than failing to start.
 */
export interface ServiceModels {
  readonly complete: (
    workspaceId: WorkspaceId,
    modelId: string,
    request: ChatRequest
  ) => Effect.Effect<ServiceModelAnswer, ChatProviderFailed>
}

export const ServiceModels = Context.Reference<ServiceModels>("@podium/domain/inference/ServiceModels", {
  defaultValue: () => ({
    complete: (_workspaceId, modelId) =>
      Effect.fail(
        new ChatProviderFailed({
          candidate_id: modelId,
          candidate_name: modelId,
          reason: "models are not served here",
          upstream_status: 409,
          latency_ms: 0
        })
      )
  })
})
