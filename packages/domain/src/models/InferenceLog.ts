import { Context, type Effect, type Option, Schema } from "effect"

/**
 * One model inference, as the model's log keeps it and its `model.inference` webhook delivers it:
 * what was asked (`input_message`), what came back (`output_messages`), the provider exchange with
 * secrets redacted (`traces`), and `metadata` (latency, usage, cost, version, status, and
 * `webhook_delivery` once a delivery was attempted).
 */
export const InferenceLog = Schema.Struct({
  id: Schema.String,
  model_id: Schema.String,
  workspace_id: Schema.String,
  version_id: Schema.String,
  /** When the call was made. */
  timestamp: Schema.DateTimeUtc,
  input_message: Schema.Record(Schema.String, Schema.Unknown),
  output_messages: Schema.Record(Schema.String, Schema.Unknown),
  traces: Schema.Record(Schema.String, Schema.Unknown),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Schema.DateTimeUtc
})
/** A plain object: built once per call on the inference path, so not a class that checks itself on construction. */
export interface InferenceLog extends Schema.Schema.Type<typeof InferenceLog> {}

/** Logs per request of `GET …/inference/logs`: default and maximum. */
export const maxLogsPerPage = 100

/**
 * Records inference logs off the request path, like traces: `record` returns once the log is
 * queued; queued logs are written in batches (group commit) and flushed when the service stops. A
 * log with `deliver` gets its webhook delivery (the durable outbox row) in the same transaction as
 * the log itself, so a log is delivered if and only if it was stored. A log the database refuses is
 * set aside and logged; it never holds the others.
 */
export class InferenceLogWriter extends Context.Service<InferenceLogWriter, {
  readonly record: (log: InferenceLog, delivery: { readonly deliver: boolean }) => Effect.Effect<void>
  /** Waits until everything queued so far is written (or set aside). */
  readonly flush: Effect.Effect<void>
}>()("@podium/domain/models/InferenceLogWriter") {}

/** The model's logs, newest first. */
export class InferenceLogReader extends Context.Service<InferenceLogReader, {
  readonly list: (modelId: string, limit: number) => Effect.Effect<ReadonlyArray<InferenceLog>>
  readonly find: (id: string) => Effect.Effect<Option.Option<InferenceLog>>
  /** The logs of those ids that exist, in no particular order. */
  readonly findMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<InferenceLog>>
}>()("@podium/domain/models/InferenceLogReader") {}
