import { Context, type Effect, type Option } from "effect"
import type { InferenceLog } from "./InferenceLog.ts"

/** The model's logs, newest first. */
export class InferenceLogReader extends Context.Service<InferenceLogReader, {
  readonly list: (modelId: string, limit: number) => Effect.Effect<ReadonlyArray<InferenceLog>>
  readonly find: (id: string) => Effect.Effect<Option.Option<InferenceLog>>
  /** The logs of those ids that exist, in no particular order. */
  readonly findMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<InferenceLog>>
}>()("@podium/domain/models/InferenceLogReader") {}
