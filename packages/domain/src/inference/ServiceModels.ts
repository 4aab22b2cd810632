import { Context, type Effect, type Scope } from "effect"
import type { WorkspaceId } from "../shared/index.ts"
import type { ChatCompletion, ChatProviderFailed, ChatRequest, ChatStream, StreamOptions } from "./ChatProvider.ts"

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
 * `stream` answers as the model, streamed (ChatProvider's `stream`); its log is written when the
 * stream ends.
 *
 * It has no default: a composition must provide it (the models context's `ServiceModelsDeployed`),
 * so leaving it out does not compile.
 */
export class ServiceModels extends Context.Service<ServiceModels, {
  readonly complete: (
    workspaceId: WorkspaceId,
    modelId: string,
    request: ChatRequest
  ) => Effect.Effect<ServiceModelAnswer, ChatProviderFailed>
  readonly stream: (
    workspaceId: WorkspaceId,
    modelId: string,
    request: ChatRequest,
    options: StreamOptions
  ) => Effect.Effect<ChatStream, ChatProviderFailed, Scope.Scope>
}>()("@podium/domain/inference/ServiceModels") {}
