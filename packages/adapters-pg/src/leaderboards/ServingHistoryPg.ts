import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ServingHistory, ServingHistoryEntry } from "@podium/domain/leaderboards"
import { Timestamp, toDate } from "../Rows.ts"

const EntryRow = Schema.Struct({ ...ServingHistoryEntry.fields, at: Timestamp })

const layer = Layer.effect(
  ServingHistory,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const columns = sql`id, workspace_id, leaderboard_id, at, kind, from_candidate_id::text AS from_candidate_id,
      to_candidate_id::text AS to_candidate_id, actor, evidence, reason`

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ leaderboardId: Schema.String, limit: Schema.Number, cursor: Schema.NullOr(Schema.String) }),
      Result: EntryRow,
      execute: ({ cursor, leaderboardId, limit }) =>
        cursor === null
          ? sql`SELECT ${columns} FROM leaderboard_serving_history WHERE leaderboard_id = ${leaderboardId}
                ORDER BY at DESC, id DESC LIMIT ${limit}`
          // an index seek past the cursor's (at, id); a cursor of no entry of this leaderboard finds nothing
          : sql`SELECT ${columns} FROM leaderboard_serving_history
                WHERE leaderboard_id = ${leaderboardId} AND (at, id) < (
                  SELECT at, id FROM leaderboard_serving_history WHERE id = ${cursor} AND leaderboard_id = ${leaderboardId})
                ORDER BY at DESC, id DESC LIMIT ${limit}`
    })

    return ServingHistory.of({
      append: (e) =>
        sql`INSERT INTO leaderboard_serving_history
              (id, workspace_id, leaderboard_id, at, kind, from_candidate_id, to_candidate_id, actor, evidence, reason)
            VALUES (${e.id}, ${e.workspace_id}, ${e.leaderboard_id}, ${toDate(e.at)}, ${e.kind}, ${e.from_candidate_id},
              ${e.to_candidate_id}, ${pg.json(e.actor)}, ${e.evidence === null ? null : pg.json(e.evidence)}, ${e.reason})`
          .pipe(Effect.asVoid, Effect.orDie),
      list: (leaderboardId, { cursor, limit }) =>
        page({ leaderboardId, limit: limit + 1, cursor: cursor ?? null }).pipe(
          Effect.map((rows) => {
            const entries = rows.slice(0, limit).map((row) => new ServingHistoryEntry(row))
            return { entries, next_cursor: rows.length > limit ? entries[entries.length - 1]!.id : null }
          }),
          Effect.orDie
        )
    })
  })
)

/** The serving history on Postgres: `leaderboard_serving_history`, whose rows Postgres keeps from change. */
export const ServingHistoryPg = { layer }
