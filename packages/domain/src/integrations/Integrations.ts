import { Context, DateTime, Effect, Layer, type Redacted } from "effect"
import { type Forbidden, type Principal, administratorOf } from "../access/index.ts"
import { type WorkspaceId, SecretCipher } from "../shared/index.ts"
import type { IntegrationProvider, IntegrationTokenRejected, IntegrationUnavailable } from "./IntegrationErrors.ts"
import { IntegrationRepository } from "./IntegrationRepository.ts"
import { type IntegrationAccount, IntegrationVerifier } from "./IntegrationVerifier.ts"

export interface ValidateInput {
  readonly provider: IntegrationProvider
  readonly token: Redacted.Redacted<string>
  readonly business_id?: WorkspaceId | undefined
}

/** Provider integrations: a token the provider accepts is sealed and kept as the workspace's credential. */
export class Integrations extends Context.Service<Integrations, {
  readonly validate: (
    principal: Principal,
    input: ValidateInput
  ) => Effect.Effect<
    { readonly workspaceId: WorkspaceId; readonly account: IntegrationAccount; readonly validatedAt: DateTime.Utc },
    Forbidden | IntegrationTokenRejected | IntegrationUnavailable
  >
}>()("@podium/domain/integrations/Integrations") {
  static readonly layer = Layer.effect(
    Integrations,
    Effect.gen(function*() {
      const verifier = yield* IntegrationVerifier
      const cipher = yield* SecretCipher
      const repository = yield* IntegrationRepository

      const validate = Effect.fn("Integrations.validate")(function*(principal: Principal, input: ValidateInput) {
        const admin = yield* administratorOf(principal, input.business_id)
        const account = yield* verifier.verify(input.provider, input.token)
        const validatedAt = yield* DateTime.now
        yield* repository.save({
          workspace_id: admin.workspace_id,
          provider: input.provider,
          sealed_token: yield* cipher.seal(input.token),
          label: account.label,
          details: account.details,
          validated_by: admin.user_id,
          validated_at: validatedAt
        })
        return { workspaceId: admin.workspace_id, account, validatedAt }
      })

      return Integrations.of({ validate })
    })
  )
}
