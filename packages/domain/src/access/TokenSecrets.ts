import { Context, type Effect, type Redacted } from "effect"

export interface MintedSecret {
  /** The full secret: shown to the caller once, never stored. */
  readonly secret: Redacted.Redacted<string>
  /** What is stored and looked up: a one-way digest of the secret. */
  readonly hash: string
  /** The recognisable start of the secret, safe to list. */
  readonly displayPrefix: string
}

/** Mints high-entropy bearer secrets and digests presented ones for lookup. */
export class TokenSecrets extends Context.Service<TokenSecrets, {
  readonly mint: (prefix: string) => Effect.Effect<MintedSecret>
  readonly digest: (secret: Redacted.Redacted<string>) => string
}>()("@podium/domain/access/TokenSecrets") {}
