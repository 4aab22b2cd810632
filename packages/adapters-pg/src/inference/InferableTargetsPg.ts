import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { InferableTargetsRepository } from "@podium/domain/inference"
import { WorkspaceId } from "@podium/domain/shared"
import { Timestamp } from "../Rows.ts"

const TargetRow = Schema.Struct({ id: Schema.String, workspace_id: WorkspaceId, created_at: Timestamp })

/** A workspace's inference targets, one statement per kind (the workspace indexes of leaderboards and models). */
const layer = Layer.effect(
  InferableTargetsRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const leaderboards = SqlSchema.findAll({
      Request: Schema.String,
      Result: TargetRow,
      execute: (workspaceId) =>
        sql`SELECT id::text AS id, workspace_id::text AS workspace_id, created_at FROM leaderboards
            WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL AND status <> 'archived'
            ORDER BY created_at, id`
    })
    const models = SqlSchema.findAll({
      Request: Schema.String,
      Result: TargetRow,
      execute: (workspaceId) =>
        sql`SELECT m.id::text AS id, m.workspace_id::text AS workspace_id, m.created_at FROM models m
            WHERE m.workspace_id = ${workspaceId} AND m.deleted_at IS NULL
              AND EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND v.deployment_status = 'active')
            ORDER BY m.created_at, m.id`
    })
    const targets = (kind: "leaderboard" | "model", read: typeof leaderboards) => (workspaceId: WorkspaceId) =>
      read(workspaceId).pipe(Effect.map((rows) => rows.map((row) => ({ kind, ...row }))), Effect.orDie)
    return InferableTargetsRepository.of({
      leaderboards: targets("leaderboard", leaderboards),
      models: targets("model", models)
    })
  })
)

export const InferableTargetsPg = { layer }
