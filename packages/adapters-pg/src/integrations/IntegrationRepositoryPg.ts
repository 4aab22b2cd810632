import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { UserId, WorkspaceId } from "@podium/domain/shared"
import { IntegrationProvider, IntegrationRepository } from "@podium/domain/integrations"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { Timestamp, toDate } from "../Rows.ts"

const IntegrationRow = Schema.Struct({
  workspace_id: WorkspaceId,
  provider: IntegrationProvider,
  sealed_token: Schema.String,
  key_hint: Schema.NullOr(Schema.String),
  label: Schema.NullOr(Schema.String),
  details: Schema.Record(Schema.String, Schema.Unknown),
  validated_by: Schema.NullOr(UserId),
  validated_at: Timestamp
})

const layer = Layer.effect(
  IntegrationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    // Calls to Router and Hub candidates without their own token read the workspace's integration.
    const copies = (yield* ChangeFeed).copies<typeof IntegrationRow.Type>("integration", {
      tagOf: (integration) => integration.workspace_id
    })
    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, provider: Schema.String }),
      Result: IntegrationRow,
      execute: ({ provider, workspaceId }) =>
        sql`SELECT workspace_id, provider, sealed_token, key_hint, label, details, validated_by, validated_at
            FROM integrations WHERE workspace_id = ${workspaceId} AND provider = ${provider}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: IntegrationRow,
      execute: (workspaceId) =>
        sql`SELECT workspace_id, provider, sealed_token, key_hint, label, details, validated_by, validated_at
            FROM integrations WHERE workspace_id = ${workspaceId} ORDER BY provider`
    })
    return IntegrationRepository.of({
      save: (i) =>
        sql`INSERT INTO integrations (workspace_id, provider, sealed_token, key_hint, label, details, validated_by, validated_at)
            VALUES (${i.workspace_id}, ${i.provider}, ${i.sealed_token}, ${i.key_hint}, ${i.label}, ${pg.json(i.details)},
              ${i.validated_by}, ${toDate(i.validated_at)})
            ON CONFLICT (workspace_id, provider) DO UPDATE SET sealed_token = EXCLUDED.sealed_token,
              key_hint = EXCLUDED.key_hint, label = EXCLUDED.label,
              details = EXCLUDED.details, validated_by = EXCLUDED.validated_by,
              validated_at = EXCLUDED.validated_at`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => copies.drop(i.workspace_id)))
        ),
      find: (workspaceId, provider) =>
        copies.get(`${workspaceId}:${provider}`, find({ workspaceId, provider }).pipe(Effect.orDie)),
      list: (workspaceId) => list(workspaceId).pipe(Effect.orDie),
      // The delete's announcement drops other instances' copies; this instance drops its own at once.
      remove: (workspaceId, provider) =>
        sql`DELETE FROM integrations WHERE workspace_id = ${workspaceId} AND provider = ${provider} RETURNING provider`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => copies.drop(workspaceId)))
        )
    })
  })
)

export const IntegrationRepositoryPg = { layer }
