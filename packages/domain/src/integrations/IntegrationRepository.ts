import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserId, WorkspaceId } from "../shared/index.ts"
import type { IntegrationProvider } from "./IntegrationErrors.ts"

export interface StoredIntegration {
  readonly workspace_id: WorkspaceId
  readonly provider: IntegrationProvider
  /** The provider token, sealed by SecretCipher. */
  readonly sealed_token: string
  /** The token's last four characters (`…abcd`) for telling keys apart; null for short tokens and rows stored before hints. */
  readonly key_hint: string | null
  readonly label: string | null
  readonly details: Readonly<Record<string, unknown>>
  readonly validated_by: UserId | null
  readonly validated_at: DateTime.Utc
}

/** A workspace's provider credentials: one per provider, replaced on each successful validation. */
export class IntegrationRepository extends Context.Service<IntegrationRepository, {
  readonly save: (integration: StoredIntegration) => Effect.Effect<void>
  readonly find: (workspaceId: WorkspaceId, provider: IntegrationProvider) => Effect.Effect<Option.Option<StoredIntegration>>
  /** The workspace's integrations, by provider name. */
  readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<StoredIntegration>>
  /** Removes the workspace's integration for the provider; false when it had none. Later finds see it gone. */
  readonly remove: (workspaceId: WorkspaceId, provider: IntegrationProvider) => Effect.Effect<boolean>
}>()("@podium/domain/integrations/IntegrationRepository") {}
