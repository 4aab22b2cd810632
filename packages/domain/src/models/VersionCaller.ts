import { Context, DateTime, Effect, Layer, Option, Result, Semaphore } from "effect"
import { type ChatCompletion, ChatProvider, ChatProviderFailed, type ChatTarget, ChatTargets, NoActiveDeployment } from "../inference/index.ts"
import { type ChatMessage, type ModelVersionId, NotFound } from "../shared/index.ts"
import { defaultDeployment, type Deployment } from "./Deployment.ts"
import { versionTarget } from "./Deployments.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import type { InferenceLog } from "./InferenceLog.ts"
import { InferenceLogWriter } from "./InferenceLogWriter.ts"
import { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { ModelServing, type ServedVersion, type ServingModel } from "./ModelServing.ts"

/** The version a call goes to, and how it is asked. */
export interface ChosenVersion {
  readonly model: ServingModel
  readonly version: ServedVersion
  readonly deployment: Deployment
  readonly target: ChatTarget
  /** The messages the version is sent for the caller's (a `few_shot` version's demonstrations go in front). */
  readonly shape: (messages: ReadonlyArray<ChatMessage>) => ReadonlyArray<ChatMessage>
  /** Where the version lives (a tuned model's name): never written to a log or an error. */
  readonly secret: string | null
}

/** One call to a version: the caller's messages, what was sent, and the limits it went with. */
export interface VersionExchange {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly sent: ReadonlyArray<ChatMessage>
  /** The caller's, else the deployment's `default_max_new_tokens`. */
  readonly maxTokens: number
  readonly temperature: number | undefined
  readonly response_format?: unknown
}

/** A call made: when, and the upstream's answer or failure. */
export interface VersionCall {
  readonly timestamp: DateTime.Utc
  readonly result: Result.Result<ChatCompletion, ChatProviderFailed>
}

export const redact = (text: string, secret: string | null) =>
  secret === null || secret === "" ? text : text.split(secret).join("[version]")

/**
 * A version's answer as the model's: its `model` is the Podium model's name, not the provider's
 * (a tuned model's name is where the version lives). Anything but a JSON object is left as it came.
 */
export const answeredAs = (body: string, modelName: string): string => {
  let answer: unknown
  try {
    answer = JSON.parse(body)
  } catch {
    return body
  }
  return typeof answer === "object" && answer !== null && !Array.isArray(answer)
    ? JSON.stringify({ ...answer, model: modelName })
    : body
}

/** The model's active version a call goes to: the one named (if it is active), else the most recently deployed. */
export const activeVersion = (model: Pick<ServingModel, "active">, versionId: ModelVersionId | null): ServedVersion | undefined =>
  versionId === null ? model.active[0] : model.active.find((v) => v.id === versionId)

export const exchangeOf = (
  chosen: Pick<ChosenVersion, "shape" | "deployment">,
  request: {
    readonly messages: ReadonlyArray<ChatMessage>
    readonly temperature?: number | undefined
    readonly max_tokens?: number | undefined
    readonly response_format?: unknown
  }
): VersionExchange => ({
  messages: request.messages,
  sent: chosen.shape(request.messages),
  maxTokens: request.max_tokens ?? chosen.deployment.default_max_new_tokens,
  temperature: request.temperature,
  ...(request.response_format === undefined ? {} : { response_format: request.response_format })
})

/** The model's inference log of a call: the provider exchange without where the version lives or any credential. */
export const inferenceLogOf = (
  chosen: Pick<ChosenVersion, "model" | "version" | "secret">,
  exchange: VersionExchange,
  called: VersionCall,
  ids: { readonly message_id: string; readonly trace_id: string | null },
  now: DateTime.Utc
): InferenceLog => {
  const { model, secret, version } = chosen
  const { maxTokens, messages, sent } = exchange
  const { result } = called
  const output = Result.isSuccess(result) ? result.success.output : null
  return {
    id: ids.message_id,
    model_id: model.id,
    workspace_id: model.workspace_id,
    version_id: version.id,
    timestamp: called.timestamp,
    input_message: { messages },
    output_messages: { messages: output === null ? [] : [{ role: "assistant", content: output }] },
    traces: {
      request: {
        messages: sent.length === messages.length ? messages : `[${sent.length - messages.length} demonstration turns] + messages`,
        max_tokens: maxTokens,
        temperature: exchange.temperature ?? null
      },
      response: Result.isSuccess(result)
        ? { status: 200, body: redact(result.success.body, secret) }
        : { status: result.failure.upstream_status, error: redact(result.failure.reason, secret) }
    },
    metadata: {
      status: Result.isSuccess(result) ? "success" : "error",
      version_id: version.id,
      trainer: version.trainer,
      latency_ms: Result.isSuccess(result) ? result.success.latencyMs : result.failure.latency_ms,
      usage: Result.isSuccess(result) ? result.success.usage : null,
      cost_usd: Result.isSuccess(result) ? result.success.costUsd : null,
      trace_id: ids.trace_id
    },
    created_at: now
  }
}

/** Why a Service candidate's model cannot answer, as the failure of a candidate that did not (no upstream was called). */
export const unservable = (
  model: { readonly id: string; readonly name: string },
  error: NotFound | NoSuccessfulFineTune | NoActiveDeployment
): ChatProviderFailed =>
  new ChatProviderFailed({
    candidate_id: model.id,
    candidate_name: model.name,
    reason: error._tag === "NotFound"
      ? `the model ${model.id} is not a model of this workspace`
      : error._tag === "NoSuccessfulFineTune"
      ? `the model ${model.name} has no successful fine-tune yet`
      : `the model ${model.name} has no active deployment`,
    upstream_status: error._tag === "NotFound" ? 404 : 409,
    latency_ms: 0
  })

/**
 * Calls to versions, shared by model inference (ModelInference) and Service candidates
 * (ServiceModelsDeployed): which version answers, the call within the version's workers, and its
 * inference log. Both layers provide this same layer, which a composition builds once, so a
 * version's `max_workers` holds across both.
 */
export class VersionCaller extends Context.Service<VersionCaller, {
  readonly choose: (
    model: ServingModel,
    versionId: ModelVersionId | null
  ) => Effect.Effect<ChosenVersion, NotFound | NoSuccessfulFineTune | NoActiveDeployment>
  readonly call: (chosen: ChosenVersion, exchange: VersionExchange) => Effect.Effect<VersionCall>
  readonly log: (
    chosen: ChosenVersion,
    exchange: VersionExchange,
    called: VersionCall,
    ids: { readonly message_id: string; readonly trace_id: string | null }
  ) => Effect.Effect<void>
}>()("@podium/domain/models/VersionCaller") {
  static readonly layer = Layer.effect(
    VersionCaller,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const provider = yield* ChatProvider
      const logs = yield* InferenceLogWriter
      const context = yield* Effect.context<FineTuningApi | ChatTargets>()

      /** Calls served at once per version on this instance (its deployment's `max_workers`). */
      const workers = new Map<string, { readonly size: number; readonly gate: Semaphore.Semaphore }>()
      const workersOf = (version: ServedVersion) => {
        const size = (version.deployment ?? defaultDeployment).max_workers
        let entry = workers.get(version.id)
        if (entry === undefined || entry.size !== size) workers.set(version.id, entry = { size, gate: Semaphore.makeUnsafe(size) })
        return entry.gate
      }

      const choose = Effect.fnUntraced(function*(model: ServingModel, versionId: ModelVersionId | null) {
        if (!model.fine_tuned) {
          return yield* new NoSuccessfulFineTune({ model_id: model.id, message: "The model has no successful fine-tune yet" })
        }
        const version = activeVersion(model, versionId)
        if (version === undefined && versionId !== null && Option.isNone(yield* serving.version(model.id, versionId))) {
          return yield* new NotFound({ resource: "model version", id: versionId })
        }
        if (version === undefined) return yield* new NoActiveDeployment({ model_id: model.id })
        const { shape, target } = yield* versionTarget(version.artifact, model.workspace_id).pipe(Effect.provide(context))
        return {
          model,
          version,
          deployment: version.deployment ?? defaultDeployment,
          target: target as ChatTarget,
          shape,
          secret: version.artifact.kind === "openai" ? version.artifact.model : null
        } satisfies ChosenVersion
      })

      const call = Effect.fnUntraced(function*(chosen: ChosenVersion, exchange: VersionExchange) {
        const timestamp = yield* DateTime.now
        const result = yield* Semaphore.withPermit(
          workersOf(chosen.version),
          Effect.result(provider.complete(chosen.target, {
            messages: exchange.sent,
            temperature: exchange.temperature,
            max_tokens: exchange.maxTokens,
            ...(exchange.response_format === undefined ? {} : { response_format: exchange.response_format })
          }))
        )
        return { timestamp, result } satisfies VersionCall
      })

      const log = Effect.fnUntraced(function*(
        chosen: ChosenVersion,
        exchange: VersionExchange,
        called: VersionCall,
        ids: { readonly message_id: string; readonly trace_id: string | null }
      ) {
        const now = yield* DateTime.now
        yield* logs.record(inferenceLogOf(chosen, exchange, called, ids, now), { deliver: chosen.model.webhook_enabled })
      })

      return VersionCaller.of({ choose, call, log })
    })
  )
}
