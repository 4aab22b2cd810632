import { DateTime, Schema } from "effect"
import { Uuid, WorkspaceId } from "../shared/index.ts"

/** One recorded call of a candidate or model. */
export const TraceId = Uuid.pipe(Schema.brand("TraceId"))
export type TraceId = typeof TraceId.Type

/**
 * Where a trace comes from: `inference` (production calls through a leaderboard), `run` (a
 * leaderboard run), `dataset` (a row accepted by a dataset push, read where the row is stored:
 * its reference is the output), `manual` (human-evaluation generation), `fine_tune` (a fine-tune's calls: measuring on held-out
 * rows, choosing demonstrations, writing synthetic references; `run_id` is the fine-tune run's).
 */
export const TraceSource = Schema.Literals(["run", "inference", "dataset", "manual", "fine_tune"])
export type TraceSource = typeof TraceSource.Type

/** `cancelled`: the caller went away mid-stream; the upstream call was aborted and the trace holds what had arrived. */
export const TraceStatus = Schema.Literals(["success", "error", "cancelled"])
export type TraceStatus = typeof TraceStatus.Type

/**
 * A message as the call sent it: `{role, content}` with string content, or OpenAI's shapes (parts
 * content, `tool_calls`, `tool_call_id`, `name`) kept whole, inline images included.
 */
export const TraceMessage = Schema.StructWithRest(
  Schema.Struct({ role: Schema.String, content: Schema.optionalKey(Schema.Unknown) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

export const Trace = Schema.Struct({
  id: Schema.String,
  workspace_id: WorkspaceId,
  leaderboard_id: Schema.String,
  leaderboard_model_id: Schema.NullOr(Schema.String),
  source: TraceSource,
  run_id: Schema.NullOr(Schema.String),
  input: Schema.NullOr(Schema.String),
  messages: Schema.Array(TraceMessage),
  output: Schema.NullOr(Schema.String),
  status: TraceStatus,
  error: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Number),
  usage: Schema.NullOr(Schema.Record(Schema.String, Schema.Number)),
  cost_usd: Schema.NullOr(Schema.Number),
  token_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc
})
export type Trace = typeof Trace.Type

/**
 * A trace as the export sends it: every field but `workspace_id`, in this order, `created_at` as
 * ISO 8601 to the millisecond in UTC. Trace readers that render export lines themselves (in SQL)
 * render this object.
 */
export const exportedTrace = (trace: Trace) => ({
  id: trace.id,
  leaderboard_id: trace.leaderboard_id,
  leaderboard_model_id: trace.leaderboard_model_id,
  source: trace.source,
  run_id: trace.run_id,
  input: trace.input,
  messages: trace.messages,
  output: trace.output,
  status: trace.status,
  error: trace.error,
  latency_ms: trace.latency_ms,
  usage: trace.usage,
  cost_usd: trace.cost_usd,
  token_id: trace.token_id,
  created_at: DateTime.formatIso(trace.created_at)
})
