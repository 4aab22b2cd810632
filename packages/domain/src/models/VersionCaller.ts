import { Context, DateTime, Effect, Layer, Option, Result, type Scope, Semaphore } from "effect"
import {
  cappedParameters,
  type ChatCompletion,
  ChatProviderFailed,
  ChatProvider,
  type ChatRequest,
  type ChatStream,
  type ChatTarget,
  ChatTargets,
  NoActiveDeployment,
  nothingReceived,
  type StreamedOutcome,
  finishOnce,
  type StreamOptions,
  tracedOutcome
} from "../inference/index.ts"
import { type ModelVersionId, NotFound, type RequestMessage } from "../shared/index.ts"
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
  readonly shape: (messages: ReadonlyArray<RequestMessage>) => ReadonlyArray<RequestMessage>
  /** Where the version lives (a tuned model's name): never written to a log or an error. */
  readonly secret: string | null
}

/** One call to a version: the caller's messages, what was sent, and the limits it went with. */
export interface VersionExchange {
  readonly messages: ReadonlyArray<RequestMessage>
  readonly sent: ReadonlyArray<RequestMessage>
  /** The caller's (`max_tokens`, or `max_completion_tokens`), else the deployment's `default_max_new_tokens`. */
  readonly maxTokens: number
  /** Every other parameter sent (the caller's, `temperature` and `response_format` among them), the output capped at `maxTokens`. */
  readonly parameters: Readonly<Record<string, unknown>>
}

/** A call made: when, and the upstream's answer or failure. */
export interface VersionCall {
  readonly timestamp: DateTime.Utc
  readonly result: Result.Result<ChatCompletion, ChatProviderFailed>
}

/** A call that failed before any answer came. */
export interface FailedCall extends VersionCall {
  readonly result: Result.Failure<ChatCompletion, ChatProviderFailed>
}

/** A streamed call that stopped: when it was made, what arrived and how it ended. */
export interface StreamedCall {
  readonly timestamp: DateTime.Utc
  readonly result: StreamedOutcome
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

export const exchangeOf = (chosen: Pick<ChosenVersion, "shape" | "deployment">, request: ChatRequest): VersionExchange => {
  const given = request.parameters ?? {}
  const parameters = {
    ...given,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.response_format === undefined ? {} : { response_format: request.response_format })
  }
  const requested = request.max_tokens ?? given.max_completion_tokens ?? given.max_tokens
  const maxTokens = typeof requested === "number" ? requested : chosen.deployment.default_max_new_tokens
  return { messages: request.messages, sent: chosen.shape(request.messages), maxTokens, parameters: cappedParameters(parameters, maxTokens) }
}

/** The model's inference log of a call: the provider exchange without where the version lives or any credential. */
export const inferenceLogOf = (
  chosen: Pick<ChosenVersion, "model" | "version" | "secret">,
  exchange: VersionExchange,
  called: VersionCall | StreamedCall,
  ids: { readonly message_id: string; readonly trace_id: string | null },
  now: DateTime.Utc
): InferenceLog => {
  const { model, secret, version } = chosen
  const { maxTokens, messages, parameters, sent } = exchange
  const { result } = called
  const traced = tracedOutcome(result)
  return {
    id: ids.message_id,
    model_id: model.id,
    workspace_id: model.workspace_id,
    version_id: version.id,
    timestamp: called.timestamp,
    input_message: { messages },
    output_messages: { messages: traced.output === null ? [] : [{ role: "assistant", content: traced.output }] },
    traces: {
      request: {
        messages: sent.length === messages.length ? messages : `[${sent.length - messages.length} demonstration turns] + messages`,
        ...parameters,
        max_tokens: maxTokens,
        temperature: parameters.temperature ?? null
      },
      response: result._tag === "Success"
        ? { status: 200, body: redact(result.success.body, secret) }
        : result._tag === "Failure"
        ? { status: result.failure.upstream_status, error: redact(result.failure.reason, secret) }
        : { status: 200, stream: traced.status, ...(traced.error === null ? {} : { error: redact(traced.error, secret) }) }
    },
    metadata: {
      status: traced.status,
      version_id: version.id,
      trainer: version.trainer,
      latency_ms: traced.latency_ms,
      usage: traced.usage,
      cost_usd: traced.cost_usd,
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
  /**
   * The call streamed, within the version's workers until the caller's scope closes; `done` runs
   * once when it stops (with the call as it went: log and trace it there). Failing before any
   * event, it is a call made (`VersionCall`) and `done` does not run.
   */
  readonly stream: (
    chosen: ChosenVersion,
    exchange: VersionExchange,
    options: StreamOptions,
    done: (called: StreamedCall) => Effect.Effect<void>
  ) => Effect.Effect<Result.Result<ChatStream, FailedCall>, never, Scope.Scope>
  readonly log: (
    chosen: ChosenVersion,
    exchange: VersionExchange,
    called: VersionCall | StreamedCall,
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

      const sent = (exchange: VersionExchange): ChatRequest => ({ messages: exchange.sent, parameters: exchange.parameters })

      const call = Effect.fnUntraced(function*(chosen: ChosenVersion, exchange: VersionExchange) {
        const timestamp = yield* DateTime.now
        const result = yield* Semaphore.withPermit(workersOf(chosen.version), Effect.result(provider.complete(chosen.target, sent(exchange))))
        return { timestamp, result } satisfies VersionCall
      })

      const stream = (
        chosen: ChosenVersion,
        exchange: VersionExchange,
        options: StreamOptions,
        done: (called: StreamedCall) => Effect.Effect<void>
      ): Effect.Effect<Result.Result<ChatStream, FailedCall>, never, Scope.Scope> =>
        Effect.gen(function*() {
          const gate = workersOf(chosen.version)
          yield* Effect.acquireRelease(Semaphore.take(gate, 1), () => Semaphore.release(gate, 1))
          const timestamp = yield* DateTime.now
          // `done` runs once, when the call stops (finishOnce)
          let received = () => nothingReceived(0)
          const { bind, dismiss } = yield* finishOnce((end) =>
            Effect.suspend(() => done({ timestamp, result: { _tag: "Streamed", received: received(), end } }))
          )
          const opened = yield* Effect.result(provider.stream(chosen.target, sent(exchange), options))
          if (Result.isFailure(opened)) {
            yield* dismiss
            const failed: FailedCall = { timestamp, result: Result.fail(opened.failure) as Result.Failure<ChatCompletion, ChatProviderFailed> }
            return Result.fail(failed)
          }
          received = opened.success.received
          return Result.succeed({
            received,
            events: bind(opened.success.events)
          } satisfies ChatStream)
        })

      const log = Effect.fnUntraced(function*(
        chosen: ChosenVersion,
        exchange: VersionExchange,
        called: VersionCall | StreamedCall,
        ids: { readonly message_id: string; readonly trace_id: string | null }
      ) {
        const now = yield* DateTime.now
        yield* logs.record(inferenceLogOf(chosen, exchange, called, ids, now), { deliver: chosen.model.webhook_enabled })
      })

      return VersionCaller.of({ choose, call, stream, log })
    })
  )
}
