import { Context, type Effect, type Redacted } from "effect"

/**
 * Seals provider credentials at rest. `seal` output is opaque text safe to store;
 * `open` returns the plain secret wrapped in Redacted so it never reaches a log.
 */
export class SecretCipher extends Context.Service<SecretCipher, {
  readonly seal: (plain: Redacted.Redacted<string>) => Effect.Effect<string>
  readonly open: (sealed: string) => Effect.Effect<Redacted.Redacted<string>>
}>()("@podium/domain/shared/SecretCipher") {}
