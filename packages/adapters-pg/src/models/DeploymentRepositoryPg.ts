import { PgClient } from "@effect/sql-pg"
import { DateTime, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DeploymentRepository } from "@podium/domain/models"
import { type ModelVersionId, storableText } from "@podium/domain/shared"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { toDate } from "../Rows.ts"

const layer = Layer.effect(
  DeploymentRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    // a deployment changes what the model's serving copy holds: this instance's is dropped at once
    const feed = yield* ChangeFeed

    return DeploymentRepository.of({
      start: (modelId, versionId, deployment, now) =>
        sql`
          UPDATE model_versions SET deployment_status = 'deploying', deployment = ${pg.json(deployment)},
            deployment_error = NULL, deployed_at = ${toDate(now)}
          WHERE id = ${versionId} AND model_id = ${modelId} AND deployment_status IN ('none', 'failed', 'stopped')
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie, Effect.ensuring(feed.changed("model", modelId))),
      stop: (modelId, versionId) =>
        sql`
          UPDATE model_versions SET deployment_status = 'stopped'
          WHERE id = ${versionId} AND model_id = ${modelId} AND deployment_status = 'active'
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie, Effect.ensuring(feed.changed("model", modelId))),
      deployingBefore: (cutoff) =>
        sql<{ id: ModelVersionId; requested_at: Date }>`
          SELECT id::text AS id, deployed_at AS requested_at FROM model_versions
          WHERE deployment_status = 'deploying' AND deployed_at < ${toDate(cutoff)}`.pipe(
          Effect.map((rows) => rows.map((row) => ({ id: row.id, requested_at: DateTime.fromDateUnsafe(row.requested_at) }))),
          Effect.orDie
        ),
      finish: (versionId, outcome, now) => {
        let modelId: string | undefined
        return sql.withTransaction(Effect.gen(function*() {
          // the model's row first: two deployments of one model finishing at once take turns
          const [version] = yield* sql<{ model_id: string }>`
            SELECT model_id::text AS model_id FROM model_versions WHERE id = ${versionId} AND deployment_status = 'deploying'`
          if (version === undefined) return false
          modelId = version.model_id
          yield* sql`SELECT id FROM models WHERE id = ${version.model_id} FOR UPDATE`
          if (outcome.status === "failed") {
            const failed = yield* sql`
              UPDATE model_versions SET deployment_status = 'failed', deployment_error = ${storableText(outcome.error)}
              WHERE id = ${versionId} AND deployment_status = 'deploying' RETURNING id`
            return failed.length > 0
          }
          // a newer deployment replaces the one serving now
          yield* sql`
            UPDATE model_versions SET deployment_status = 'stopped'
            WHERE model_id = ${version.model_id} AND deployment_status = 'active'`
          const activated = yield* sql`
            UPDATE model_versions SET deployment_status = 'active', deployed_at = ${toDate(now)}
            WHERE id = ${versionId} AND deployment_status = 'deploying' RETURNING id`
          return activated.length > 0
        })).pipe(
          Effect.orDie,
          Effect.ensuring(Effect.suspend(() => modelId === undefined ? Effect.void : feed.changed("model", modelId)))
        )
      }
    })
  })
)

/** Deployments of model versions in Postgres (the version's immutable fields are guarded by a trigger). */
export const DeploymentRepositoryPg = { layer }
