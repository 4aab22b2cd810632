import { Context, type DateTime, type Effect, type Option } from "effect"
import type { InferenceLog } from "./InferenceLog.ts"

/**
 * Which of a model's logs a list reads: those after `cursor` (a log id; older in the list's order,
 * and none when it names no log of the model) with `created_at` from `from` (inclusive) to `to`
 * (exclusive).
 */
export interface LogWindow {
  readonly cursor?: string | undefined
  readonly from?: DateTime.Utc | undefined
  readonly to?: DateTime.Utc | undefined
}

/** The model's logs, newest first (by `created_at`, then id). */
export class InferenceLogReader extends Context.Service<InferenceLogReader, {
  readonly list: (modelId: string, limit: number, window?: LogWindow) => Effect.Effect<ReadonlyArray<InferenceLog>>
  readonly find: (id: string) => Effect.Effect<Option.Option<InferenceLog>>
  /** The logs of those ids that exist, in no particular order. */
  readonly findMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<InferenceLog>>
}>()("@podium/domain/models/InferenceLogReader") {}
