import { Context, DateTime, Effect, Layer, Redacted } from "effect"
import { type Forbidden, type Principal, administratorOf } from "../access/index.ts"
import { NotFound, type WorkspaceId, SecretCipher } from "../shared/index.ts"
import type { IntegrationProvider, IntegrationTokenRejected, IntegrationUnavailable } from "./IntegrationErrors.ts"
import { IntegrationRepository, type StoredIntegration } from "./IntegrationRepository.ts"
import { type IntegrationAccount, IntegrationVerifier } from "./IntegrationVerifier.ts"

export interface ValidateInput {
  readonly provider: IntegrationProvider
  readonly token: Redacted.Redacted<string>
  readonly business_id?: WorkspaceId | undefined
}

/** Tokens shorter than this get no hint: four characters would give away too much of them. */
export const keyHintMinLength = 16

/** The last four characters of a token as `…abcd`, or null for a token shorter than keyHintMinLength. */
export const keyHintOf = (token: string): string | null =>
  token.length < keyHintMinLength ? null : `…${token.slice(-4)}`

/** Provider integrations: a token the provider accepts is sealed and kept as the workspace's credential. */
export class Integrations extends Context.Service<Integrations, {
  readonly validate: (
    principal: Principal,
    input: ValidateInput
  ) => Effect.Effect<
    { readonly workspaceId: WorkspaceId; readonly account: IntegrationAccount; readonly validatedAt: DateTime.Utc },
    Forbidden | IntegrationTokenRejected | IntegrationUnavailable
  >
  /** The workspace's stored integrations (sealed tokens included: callers show only the hint). Owners and admins. */
  readonly list: (
    principal: Principal,
    businessId: WorkspaceId | undefined
  ) => Effect.Effect<{ readonly workspaceId: WorkspaceId; readonly integrations: ReadonlyArray<StoredIntegration> }, Forbidden>
  /** Removes the workspace's integration for a provider: its candidates and judges stop using the token. */
  readonly remove: (
    principal: Principal,
    provider: IntegrationProvider,
    businessId: WorkspaceId | undefined
  ) => Effect.Effect<void, Forbidden | NotFound>
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
          key_hint: keyHintOf(Redacted.value(input.token)),
          label: account.label,
          details: account.details,
          validated_by: admin.user_id,
          validated_at: validatedAt
        })
        return { workspaceId: admin.workspace_id, account, validatedAt }
      })

      const list = Effect.fn("Integrations.list")(function*(principal: Principal, businessId: WorkspaceId | undefined) {
        const admin = yield* administratorOf(principal, businessId)
        return { workspaceId: admin.workspace_id, integrations: yield* repository.list(admin.workspace_id) }
      })

      const remove = Effect.fn("Integrations.remove")(
        function*(principal: Principal, provider: IntegrationProvider, businessId: WorkspaceId | undefined) {
          const admin = yield* administratorOf(principal, businessId)
          if (!(yield* repository.remove(admin.workspace_id, provider))) {
            return yield* new NotFound({ resource: "integration", id: provider })
          }
        }
      )

      return Integrations.of({ validate, list, remove })
    })
  )
}
