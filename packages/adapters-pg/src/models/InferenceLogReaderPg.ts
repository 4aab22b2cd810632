import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { InferenceLog, InferenceLogReader, type LogWindow } from "@podium/domain/models"
import { Timestamp, toDate } from "../Rows.ts"

const LogRow = Schema.Struct({ ...InferenceLog.fields, timestamp: Timestamp, created_at: Timestamp })
const decodeLogs = Schema.decodeUnknownEffect(Schema.Array(LogRow))

const layer = Layer.effect(
  InferenceLogReader,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const logs = (where: Statement.Fragment) =>
      sql`SELECT id::text AS id, model_id::text AS model_id, workspace_id::text AS workspace_id,
            version_id::text AS version_id, "timestamp", input_message, output_messages, traces, metadata, created_at
          FROM model_inference_logs WHERE ${where}`.pipe(
        Effect.flatMap(decodeLogs),
        Effect.orDie
      )

    return InferenceLogReader.of({
      // after the cursor's log by (created_at, id): a cursor naming no log of the model compares with null, so nothing
      list: Effect.fn("InferenceLogReader.list")(function*(modelId: string, limit: number, window: LogWindow = {}) {
        const conditions = [
          sql`model_id = ${modelId}`,
          ...(window.cursor === undefined ? [] : [sql`(created_at, id) < (
            SELECT created_at, id FROM model_inference_logs WHERE id = ${window.cursor} AND model_id = ${modelId})`]),
          ...(window.from === undefined ? [] : [sql`created_at >= ${toDate(window.from)}`]),
          ...(window.to === undefined ? [] : [sql`created_at < ${toDate(window.to)}`])
        ]
        return yield* logs(sql`${sql.and(conditions)} ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, limit)}`)
      }),
      find: Effect.fn("InferenceLogReader.find")(function*(id: string) {
        return Option.fromNullishOr((yield* logs(sql`id = ${id}`))[0])
      }),
      findMany: Effect.fn("InferenceLogReader.findMany")(function*(ids: ReadonlyArray<string>) {
        if (ids.length === 0) return []
        return yield* logs(sql`id = ANY(${[...new Set(ids)]}::uuid[])`)
      })
    })
  })
)

export const InferenceLogReaderPg = { layer }
