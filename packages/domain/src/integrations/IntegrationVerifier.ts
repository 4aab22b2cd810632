import { Context, type Effect, type Redacted } from "effect"
import type { IntegrationProvider, IntegrationTokenRejected, IntegrationUnavailable } from "./IntegrationErrors.ts"

/** What a provider reported about the account behind a token; never contains the token. */
export interface IntegrationAccount {
  readonly provider: IntegrationProvider
  /** A human label for the account (router key label, hub user name), when the provider gives one. */
  readonly label: string | null
  /** The provider's own report, trimmed of anything secret. */
  readonly details: Readonly<Record<string, unknown>>
}

/**
 * Asks a provider whether a token is good: the router's key-check endpoint, the hub's whoami.
 * Rejected means the provider answered no; Unavailable means it could not be asked.
 */
export class IntegrationVerifier extends Context.Service<IntegrationVerifier, {
  readonly verify: (
    provider: IntegrationProvider,
    token: Redacted.Redacted<string>
  ) => Effect.Effect<IntegrationAccount, IntegrationTokenRejected | IntegrationUnavailable>
}>()("@podium/domain/integrations/IntegrationVerifier") {}
