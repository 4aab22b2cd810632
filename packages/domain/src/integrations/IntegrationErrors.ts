import { Schema } from "effect"

export const IntegrationProvider = Schema.Literals(["router", "hub"])
export type IntegrationProvider = typeof IntegrationProvider.Type

/** The provider answered and refused the token. */
export class IntegrationTokenRejected extends Schema.TaggedError<IntegrationTokenRejected>()(
  "IntegrationTokenRejected",
  { provider: IntegrationProvider, reason: Schema.String }
) {}

/** The provider could not be asked: not configured, unreachable, or it failed. */
export class IntegrationUnavailable extends Schema.TaggedError<IntegrationUnavailable>()(
  "IntegrationUnavailable",
  { provider: IntegrationProvider, reason: Schema.String }
) {}
