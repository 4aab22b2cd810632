import { Context, DateTime, Effect, Layer } from "effect"
import type { Principal } from "../access/index.ts"
import { InvalidInput, type ModelId, type NotFound } from "../shared/index.ts"
import { type InferenceLog, maxLogsPerPage } from "./InferenceLog.ts"
import { InferenceLogReader, type LogWindow } from "./InferenceLogReader.ts"
import { Models } from "./Models.ts"

/** A page of a model's logs, newest first. */
export interface LogPage {
  readonly logs: ReadonlyArray<InferenceLog>
  /** The last log's id while older logs (in the window asked) remain, else null: the next page's `cursor`. */
  readonly next_cursor: string | null
}

/** A model's inference logs, for those who can see the model. */
export class ModelLogs extends Context.Service<ModelLogs, {
  /**
   * At most `limit` (default and maximum `maxLogsPerPage`) logs of the window; `from` after `to`
   * is invalid input. A page starts after its cursor's log, not at an offset, so logs written while
   * a client pages (newer ones) never shift the pages it has still to read.
   */
  readonly list: (
    principal: Principal,
    modelId: ModelId,
    page: LogWindow & { readonly limit?: number | undefined }
  ) => Effect.Effect<LogPage, NotFound | InvalidInput>
}>()("@podium/domain/models/ModelLogs") {
  static readonly layer = Layer.effect(
    ModelLogs,
    Effect.gen(function*() {
      const models = yield* Models
      const reader = yield* InferenceLogReader
      return ModelLogs.of({
        list: Effect.fn("ModelLogs.list")(function*(principal, modelId, page) {
          const model = yield* models.visible(principal, modelId)
          if (page.from !== undefined && page.to !== undefined && DateTime.isGreaterThan(page.from, page.to)) {
            return yield* new InvalidInput({ message: "from must not be after to", path: ["query", "from"] })
          }
          const limit = Math.min(page.limit ?? maxLogsPerPage, maxLogsPerPage)
          const found = yield* reader.list(model.id, limit + 1, { cursor: page.cursor, from: page.from, to: page.to })
          const logs = found.slice(0, limit)
          return { logs, next_cursor: found.length > limit ? logs.at(-1)?.id ?? null : null }
        })
      })
    })
  )
}
