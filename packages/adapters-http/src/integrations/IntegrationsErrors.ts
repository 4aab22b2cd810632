import { Effect, Schema } from "effect"
import type * as Integrations from "@podium/domain/integrations"
import { IntegrationProvider } from "@podium/domain/integrations"
import { apiError, ErrorClass, type ErrorAnswers, UpstreamError } from "../api/Errors.ts"

// The HTTP errors of integrations and hub datasets; a provider that cannot be reached answers with
// the shared `upstream_error`.

export class InvalidIntegrationToken extends ErrorClass<InvalidIntegrationToken>()(
  "InvalidIntegrationToken",
  400,
  "invalid_integration_token",
  Schema.Struct({ provider: IntegrationProvider, reason: Schema.String })
) {}
export class DatasetNotFound extends ErrorClass<DatasetNotFound>()("DatasetNotFound", 404, "dataset_not_found") {}

/** Integrations' domain errors as contract errors. */
export const integrationsErrors = {
  IntegrationTokenRejected: (e) =>
    Effect.fail(apiError(InvalidIntegrationToken, `The ${e.provider} rejected the token: ${e.reason}`, {
      provider: e.provider,
      reason: e.reason
    })),
  IntegrationUnavailable: (e) =>
    Effect.fail(apiError(UpstreamError, `The ${e.provider} could not be reached: ${e.reason}`, {
      provider: e.provider
    })),
  HubDatasetNotFound: (e) =>
    Effect.fail(apiError(DatasetNotFound, `The hub has no dataset ${e.dataset_id} that this workspace can read`))
} satisfies ErrorAnswers<typeof Integrations>
