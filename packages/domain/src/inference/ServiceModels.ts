import { Context, type Effect } from "effect"
import type { WorkspaceId } from "../shared/index.ts"
import type { ChatCompletion, ChatProviderFailed, ChatRequest } from "./ChatProvider.ts"

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
 * It has no default: a composition must provide it (the models context's `ServiceModelsDeployed`),
 * so leaving it out does not compile.
 */
export class ServiceModels extends Context.Service<ServiceModels, {
  readonly complete: (
    workspaceId: WorkspaceId,
    modelId: string,
    request: ChatRequest
  ) => Effect.Effect<ServiceModelAnswer, ChatProviderFailed>
}>()("@podium/domain/inference/ServiceModels") {}
