import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Artifact, Deployment, DeploymentStatus, ModelServing, type ServedVersion, type ServingModel, Trainer } from "@podium/domain/models"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type ModelId, ModelVersionId, type WorkspaceId } from "@podium/domain/shared"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { NullableTimestamp } from "../Rows.ts"

const VersionRow = Schema.Struct({
  id: ModelVersionId,
  trainer: Trainer,
  artifact: Artifact,
  deployment_status: DeploymentStatus,
  deployment: Schema.NullOr(Deployment),
  deployed_at: NullableTimestamp
})
const decodeVersions = Schema.decodeUnknownEffect(Schema.Array(VersionRow))

const layer = Layer.effect(
  ModelServing,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // a copy per model, dropped when the database announces a change to the model, a version's deployment or its webhook
    const copies = (yield* ChangeFeed).copies<ServingModel>("model", { tagOf: (m) => m.id })

    const versions = (where: Statement.Fragment) =>
      sql`SELECT id::text AS id, trainer, artifact, deployment_status, deployment, deployed_at
          FROM model_versions WHERE ${where}`.pipe(Effect.flatMap(decodeVersions), Effect.orDie)

    const load = (modelId: string) =>
      Effect.gen(function*() {
        const [model] = yield* sql<{
          id: ModelId
          workspace_id: WorkspaceId
          name: string
          leaderboard_ids: ReadonlyArray<LeaderboardId>
          fine_tuned: boolean
          webhook_enabled: boolean
        }>`
          SELECT m.id::text AS id, m.workspace_id::text AS workspace_id, m.name,
            COALESCE((SELECT array_agg(ml.leaderboard_id::text ORDER BY ml.position) FROM model_leaderboards ml
                      WHERE ml.model_id = m.id), '{}') AS leaderboard_ids,
            EXISTS (SELECT 1 FROM fine_tune_runs r WHERE r.model_id = m.id AND r.status = 'succeeded') AS fine_tuned,
            COALESCE((SELECT w.enabled FROM model_webhooks w WHERE w.model_id = m.id), false) AS webhook_enabled
          FROM models m WHERE m.id = ${modelId} AND m.deleted_at IS NULL`.pipe(Effect.orDie)
        if (model === undefined) return Option.none<ServingModel>()
        const active = yield* versions(sql`model_id = ${modelId} AND deployment_status = 'active' ORDER BY deployed_at DESC`)
        return Option.some<ServingModel>({ ...model, active: active as ReadonlyArray<ServedVersion> })
      })

    return ModelServing.of({
      snapshot: (modelId) => copies.get(modelId, load(modelId)),
      version: (modelId, versionId) =>
        Effect.map(
          versions(sql`id = ${versionId} AND model_id = ${modelId}`),
          (rows) => Option.fromNullishOr(rows[0] as ServedVersion | undefined)
        )
    })
  })
)

/** Serving copies of models, kept current by the change feed (no database round trip on a hit). */
export const ModelServingPg = { layer }
