import { DateTime, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { type DocumentId, HumanDocument, HumanDocumentRepository } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { toDate, toDateOrNull } from "../Rows.ts"

interface DocumentRow {
  readonly id: string
  readonly leaderboard_id: string
  readonly workspace_id: string
  readonly name: string
  readonly scope: "case" | "shared"
  readonly media_type: string
  readonly size_bytes: number
  readonly sha256: string
  readonly text_chars: number
  readonly created_at: Date
  readonly archived_at: Date | null
}

const columns = "id, leaderboard_id, workspace_id, name, scope, media_type, size_bytes, sha256, text_chars, created_at, archived_at"

const toDocument = (row: DocumentRow) =>
  new HumanDocument({
    ...row,
    id: row.id as HumanDocument["id"],
    leaderboard_id: row.leaderboard_id as HumanDocument["leaderboard_id"],
    workspace_id: row.workspace_id as HumanDocument["workspace_id"],
    created_at: DateTime.fromDateUnsafe(row.created_at),
    archived_at: row.archived_at === null ? null : DateTime.fromDateUnsafe(row.archived_at)
  })

const layer = Layer.effect(
  HumanDocumentRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql.literal(columns)
    /** The leaderboard's workspace, in which its documents' ids are unique (and keyed). */
    const workspaceOf = (leaderboardId: LeaderboardId) => sql`(SELECT workspace_id FROM leaderboards WHERE id = ${leaderboardId})`

    const find = (leaderboardId: LeaderboardId, id: DocumentId) =>
      sql<DocumentRow>`SELECT ${select} FROM human_documents
                       WHERE workspace_id = ${workspaceOf(leaderboardId)} AND id = ${id} AND leaderboard_id = ${leaderboardId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toDocument)),
        Effect.orDie
      )

    return HumanDocumentRepository.of({
      insert: (d, content, text) =>
        sql.withTransaction(Effect.gen(function*() {
          const claimed = yield* sql`INSERT INTO human_client_ids (workspace_id, id, kind) VALUES (${d.workspace_id}, ${d.id}, 'document')
                                     ON CONFLICT (workspace_id, id) DO NOTHING RETURNING id`
          if (claimed.length === 0) return { _tag: "Taken" as const, existing: yield* find(d.leaderboard_id, d.id) }
          yield* sql`
            INSERT INTO human_documents (id, workspace_id, leaderboard_id, name, scope, media_type, size_bytes, sha256,
              content, text, text_chars, created_at, archived_at)
            VALUES (${d.id}, ${d.workspace_id}, ${d.leaderboard_id}, ${d.name}, ${d.scope}, ${d.media_type}, ${d.size_bytes},
              ${d.sha256}, ${content}, ${text}, ${d.text_chars}, ${toDate(d.created_at)}, ${toDateOrNull(d.archived_at)})`
          return { _tag: "Inserted" as const }
        })).pipe(Effect.orDie),
      find,
      shared: (leaderboardId) =>
        sql<DocumentRow>`SELECT ${select} FROM human_documents
                         WHERE leaderboard_id = ${leaderboardId} AND scope = 'shared' AND archived_at IS NULL
                         ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(toDocument)), Effect.orDie),
      archive: (leaderboardId, id, now) =>
        sql<DocumentRow>`UPDATE human_documents SET archived_at = COALESCE(archived_at, ${toDate(now)})
                         WHERE workspace_id = ${workspaceOf(leaderboardId)} AND id = ${id} AND leaderboard_id = ${leaderboardId}
                           AND scope = 'shared'
                         RETURNING ${select}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toDocument)),
          Effect.orDie
        ),
      texts: (workspaceId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : sql<{ id: string; name: string; text: string }>`
              SELECT id::text AS id, name, text FROM human_documents
              WHERE workspace_id = ${workspaceId} AND id = ANY(${[...ids]}::uuid[])`.pipe(
            Effect.map((rows) => ids.flatMap((id) => rows.filter((r) => r.id === id).map(({ name, text }) => ({ name, text })))),
            Effect.orDie
          )
    })
  })
)

export const HumanDocumentRepositoryPg = { layer }
