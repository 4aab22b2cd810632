import { Context, DateTime, Effect, Layer, Option, Semaphore } from "effect"
import { type BudgetExceeded, boundCall, type Principal, visibleMembership } from "../access/index.ts"
import {
  CallBudgets,
  ChatProvider,
  type ChatTarget,
  type InferenceRequest,
  NoActiveDeployment,
  StreamingUnsupported,
  TraceWriter,
  UpstreamFailed
} from "../inference/index.ts"
import { IdGenerator, NotFound, storableText, type WorkspaceId } from "../shared/index.ts"
import { defaultDeployment, ModelServing, type ServedVersion, type ServingModel } from "./Deployment.ts"
import { versionTarget } from "./Deployments.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import { InferenceLog, InferenceLogWriter } from "./InferenceLog.ts"
import { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { ChatTargets } from "../inference/index.ts"

export interface ModelServed {
  /** The upstream's JSON, as it arrived. */
  readonly body: string
  readonly model_id: string
  readonly version_id: string
  /** The inference log's id (queued for writing). */
  readonly message_id: string
  readonly trace_id: string | null
}

const redact = (text: string, secret: string | null) => secret === null || secret === "" ? text : text.split(secret).join("[version]")

/**
 * Inference through a model's deployed version: the most recently deployed active one, or the one
 * named (which must be active). Served from the instance's serving copy (no database round trip
 * before the upstream on a hit); each call is budgeted like leaderboard inference, traced on the
 * model's first leaderboard (source `inference`) and logged in the model's inference log (off the
 * request path), whose webhook delivery, when the model's webhook is on, is stored with it.
 */
export class ModelInference extends Context.Service<ModelInference, {
  readonly infer: (
    principal: Principal,
    modelId: string,
    versionId: string | null,
    request: InferenceRequest
  ) => Effect.Effect<
    ModelServed,
    NotFound | StreamingUnsupported | NoSuccessfulFineTune | NoActiveDeployment | UpstreamFailed | BudgetExceeded
  >
}>()("@podium/domain/models/ModelInference") {
  static readonly layer = Layer.effect(
    ModelInference,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const provider = yield* ChatProvider
      const budgets = yield* CallBudgets
      const traces = yield* TraceWriter
      const logs = yield* InferenceLogWriter
      const ids = yield* IdGenerator
      const context = yield* Effect.context<FineTuningApi | ChatTargets>()

      /** Calls served at once per version on this instance (its deployment's `max_workers`). */
      const workers = new Map<string, { readonly size: number; readonly gate: Semaphore.Semaphore }>()
      const workersOf = (version: ServedVersion) => {
        const size = (version.deployment ?? defaultDeployment).max_workers
        let entry = workers.get(version.id)
        if (entry === undefined || entry.size !== size) workers.set(version.id, entry = { size, gate: Semaphore.makeUnsafe(size) })
        return entry.gate
      }

      const visible = (principal: Principal, model: ServingModel) =>
        principal._tag === "ApiTokenPrincipal"
          ? principal.token.workspace_id === model.workspace_id
          : principal._tag === "SessionPrincipal" && visibleMembership(principal, model.workspace_id as WorkspaceId) !== undefined

      const infer = Effect.fn("ModelInference.infer")(function*(
        principal: Principal,
        modelId: string,
        versionId: string | null,
        request: InferenceRequest
      ) {
        if (request.stream === true) return yield* new StreamingUnsupported()
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || !visible(principal, found.value)) return yield* new NotFound({ resource: "model", id: modelId })
        const model = found.value
        if (!model.fine_tuned) {
          return yield* new NoSuccessfulFineTune({ model_id: model.id, message: "The model has no successful fine-tune yet" })
        }
        let version = versionId === null ? model.active[0] : model.active.find((v) => v.id === versionId)
        if (version === undefined && versionId !== null && Option.isNone(yield* serving.version(model.id, versionId))) {
          return yield* new NotFound({ resource: "model version", id: versionId })
        }
        if (version === undefined) return yield* new NoActiveDeployment({ model_id: model.id })
        const served: ServedVersion = version
        const deployment = served.deployment ?? defaultDeployment
        const { shape, target } = yield* versionTarget(served.artifact, model.workspace_id as WorkspaceId).pipe(Effect.provide(context))
        const secret = served.artifact.kind === "openai" ? served.artifact.model : null
        const messages = request.messages ?? []
        const sent = shape(messages)
        const maxTokens = request.max_tokens ?? deployment.default_max_new_tokens
        const bound = boundCall({ input: target.inputPricePerMTokens, output: target.outputPricePerMTokens }, sent, maxTokens, maxTokens)

        // once the upstream is called the call is paid for: finish it, and log and trace it, even if the client hangs up
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(budgets.reserve(principal, bound))
          const timestamp = yield* DateTime.now
          const result = yield* Semaphore.withPermit(workersOf(served), Effect.result(provider.complete(target as ChatTarget, {
            messages: sent,
            temperature: request.temperature,
            max_tokens: maxTokens
          })))
          yield* budgets.settle(reservation, result._tag === "Success" ? result.success.costUsd ?? 0 : 0)
          const messageId = yield* ids.next
          const traceId = model.leaderboard_ids.length > 0 ? yield* ids.next : null
          const input = messages.findLast((m) => m.role === "user")?.content ?? null
          const output = result._tag === "Success" ? result.success.output : null
          if (traceId !== null) {
            yield* traces.record({
              id: traceId,
              workspace_id: model.workspace_id as WorkspaceId,
              leaderboard_id: model.leaderboard_ids[0]!,
              leaderboard_model_id: null,
              source: "inference",
              run_id: null,
              input: input === null ? null : storableText(input),
              messages: sent.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
              output: output === null ? null : storableText(output),
              status: result._tag === "Success" ? "success" : "error",
              error: result._tag === "Failure" ? storableText(result.failure.reason) : null,
              latency_ms: result._tag === "Success" ? result.success.latencyMs : result.failure.latency_ms,
              usage: result._tag === "Success" && result.success.usage !== null ? { ...result.success.usage } : null,
              cost_usd: result._tag === "Success" ? result.success.costUsd : null,
              token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
              created_at: timestamp
            })
          }
          const now = yield* DateTime.now
          yield* logs.record(new InferenceLog({
            id: messageId,
            model_id: model.id,
            workspace_id: model.workspace_id,
            version_id: served.id,
            timestamp,
            input_message: { messages },
            output_messages: { messages: output === null ? [] : [{ role: "assistant", content: output }] },
            // the provider exchange; where the version lives (a tuned model's name) and credentials are never in it
            traces: {
              request: { messages: sent.length === messages.length ? messages : `[${sent.length - messages.length} demonstration turns] + messages`, max_tokens: maxTokens, temperature: request.temperature ?? null },
              response: result._tag === "Success"
                ? { status: 200, body: redact(result.success.body, secret) }
                : { status: result.failure.upstream_status, error: redact(result.failure.reason, secret) }
            },
            metadata: {
              status: result._tag === "Success" ? "success" : "error",
              version_id: served.id,
              trainer: served.trainer,
              latency_ms: result._tag === "Success" ? result.success.latencyMs : result.failure.latency_ms,
              usage: result._tag === "Success" ? result.success.usage : null,
              cost_usd: result._tag === "Success" ? result.success.costUsd : null,
              trace_id: traceId
            },
            created_at: now
          }), { deliver: model.webhook_enabled })
          if (result._tag === "Failure") {
            return yield* new UpstreamFailed({
              candidate_id: served.id,
              candidate_name: model.name,
              reason: redact(result.failure.reason, secret),
              trace_id: traceId ?? messageId
            })
          }
          return { body: result.success.body, model_id: model.id, version_id: served.id, message_id: messageId, trace_id: traceId }
        }))
      })

      return ModelInference.of({ infer })
    })
  )
}
