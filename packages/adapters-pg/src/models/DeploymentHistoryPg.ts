import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { DeploymentHistory, DeploymentHistoryEntry } from "@podium/domain/models"
import { storableJson, storableText } from "@podium/domain/shared"
import { Timestamp, toDate } from "../Rows.ts"

const EntryRow = Schema.Struct({ ...DeploymentHistoryEntry.fields, at: Timestamp })
const decodeEntries = Schema.decodeUnknownEffect(Schema.Array(EntryRow))

/** A model's deployment history in Postgres: rows are only inserted (a trigger refuses changing or deleting one). */
const layer = Layer.effect(
  DeploymentHistory,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient

    return DeploymentHistory.of({
      append: Effect.fn("DeploymentHistory.append")(function*(entry) {
        const rows = yield* sql`
          INSERT INTO model_deployment_history
            (id, workspace_id, model_id, at, kind, from_version_id, to_version_id, actor, evidence, reason)
          VALUES (${entry.id}, ${entry.workspace_id}, ${entry.model_id}, ${toDate(entry.at)}, ${entry.kind},
            ${entry.from_version_id}, ${entry.to_version_id}, ${pg.json(entry.actor)},
            ${entry.evidence === null ? null : pg.json(storableJson(entry.evidence))},
            ${entry.reason === null ? null : storableText(entry.reason)})
          ON CONFLICT ((actor->>'fine_tune_run_id')) WHERE kind = 'gate' DO NOTHING
          RETURNING id`.pipe(Effect.orDie)
        return rows.length > 0
      }),
      list: Effect.fn("DeploymentHistory.list")(function*(modelId, page) {
        const columns = sql`
          SELECT id::text AS id, workspace_id::text AS workspace_id, model_id::text AS model_id, at, kind,
            from_version_id::text AS from_version_id, to_version_id::text AS to_version_id, actor, evidence, reason
          FROM model_deployment_history`
        const rows = yield* (page.cursor === undefined
          ? sql`${columns} WHERE model_id = ${modelId} ORDER BY at DESC, id DESC LIMIT ${page.limit + 1}`
          : sql`
              ${columns} WHERE model_id = ${modelId} AND (at, id) < (
                SELECT at, id FROM model_deployment_history WHERE id = ${page.cursor} AND model_id = ${modelId})
              ORDER BY at DESC, id DESC LIMIT ${page.limit + 1}`).pipe(Effect.flatMap(decodeEntries), Effect.orDie)
        const entries = rows.slice(0, page.limit).map((row) => new DeploymentHistoryEntry(row))
        return {
          entries,
          next_cursor: rows.length > page.limit ? entries.at(-1)?.id ?? null : null
        }
      })
    })
  })
)

/** DeploymentHistory on Postgres. */
export const DeploymentHistoryPg = { layer }
