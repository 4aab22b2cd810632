import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { WebhookRepository } from "@podium/domain/models"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { Timestamp, toDate } from "../Rows.ts"

const WebhookRow = Schema.Struct({
  model_id: Schema.String,
  url: Schema.String,
  enabled: Schema.Boolean,
  sealed_secret: Schema.String,
  secret_created_at: Timestamp,
  updated_at: Timestamp
})
const decodeWebhooks = Schema.decodeUnknownEffect(Schema.Array(WebhookRow))

/** One row per model with a webhook; clearing the webhook deletes its row (and its secret with it). */
const layer = Layer.effect(
  WebhookRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const feed = yield* ChangeFeed

    return WebhookRepository.of({
      find: Effect.fn("WebhookRepository.find")(function*(modelId: string) {
        const rows = yield* sql`
          SELECT model_id::text AS model_id, url, enabled, sealed_secret, secret_created_at, updated_at
          FROM model_webhooks WHERE model_id = ${modelId}`.pipe(Effect.flatMap(decodeWebhooks), Effect.orDie)
        return Option.fromNullishOr(rows[0])
      }),
      // the model's serving copy says whether its logs are delivered: this instance's is dropped at once
      save: Effect.fn("WebhookRepository.save")(function*(webhook) {
        if (webhook.url === null) {
          yield* sql`DELETE FROM model_webhooks WHERE model_id = ${webhook.model_id}`.pipe(Effect.orDie)
          return
        }
        yield* sql`
          INSERT INTO model_webhooks (model_id, url, enabled, sealed_secret, secret_created_at, updated_at)
          VALUES (${webhook.model_id}, ${webhook.url}, ${webhook.enabled}, ${webhook.sealed_secret},
            ${toDate(webhook.secret_created_at)}, ${toDate(webhook.updated_at)})
          ON CONFLICT (model_id) DO UPDATE SET url = EXCLUDED.url, enabled = EXCLUDED.enabled,
            sealed_secret = EXCLUDED.sealed_secret, secret_created_at = EXCLUDED.secret_created_at,
            updated_at = EXCLUDED.updated_at`.pipe(Effect.orDie)
      }, (saved, webhook) => Effect.ensuring(saved, feed.changed("model", webhook.model_id)))
    })
  })
)

export const WebhookRepositoryPg = { layer }
