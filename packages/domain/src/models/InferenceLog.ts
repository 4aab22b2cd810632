import { Schema } from "effect"
import { ModelId, ModelVersionId, Uuid, WorkspaceId } from "../shared/index.ts"

/** One model inference in the model's log (the `message_id` a call answers with). */
export const InferenceLogId = Uuid.pipe(Schema.brand("InferenceLogId"))
export type InferenceLogId = typeof InferenceLogId.Type

/**
 * One model inference, as the model's log keeps it and its `model.inference` webhook delivers it:
 * what was asked (`input_message`), what came back (`output_messages`), the provider exchange with
 * secrets redacted (`traces`), and `metadata` (latency, usage, cost, version, status, and
 * `webhook_delivery` once a delivery was attempted).
 */
export const InferenceLog = Schema.Struct({
  id: Schema.String,
  model_id: ModelId,
  workspace_id: WorkspaceId,
  version_id: ModelVersionId,
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
