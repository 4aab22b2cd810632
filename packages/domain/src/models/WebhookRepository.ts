import { Context, type DateTime, type Effect, type Option } from "effect"
import type { ModelWebhook } from "./Webhook.ts"

/** The webhooks of models (their deliveries wait in the WebhookOutbox). */
export class WebhookRepository extends Context.Service<WebhookRepository, {
  readonly find: (modelId: string) => Effect.Effect<Option.Option<ModelWebhook>>
  /** Sets (or, with url null, clears and disables) the model's webhook. */
  readonly save: (webhook: ModelWebhook | { readonly model_id: string; readonly url: null; readonly updated_at: DateTime.Utc }) => Effect.Effect<void>
}>()("@podium/domain/models/WebhookRepository") {}
