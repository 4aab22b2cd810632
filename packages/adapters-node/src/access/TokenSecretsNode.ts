import { Effect, Layer, Redacted } from "effect"
import { TokenSecrets } from "@podium/domain/access"
import { hash, randomBytes } from "node:crypto"

/** 256 random bits behind the prefix; stored as SHA-256 (a fast hash is right for high-entropy secrets). */
export const TokenSecretsNode = Layer.succeed(TokenSecrets, TokenSecrets.of({
  mint: (prefix) =>
    Effect.sync(() => {
      const secret = prefix + randomBytes(32).toString("base64url")
      return {
        secret: Redacted.make(secret),
        hash: hash("sha256", secret, "hex"),
        displayPrefix: secret.slice(0, prefix.length + 8)
      }
    }),
  // one-shot: a Hash object per request cost ~10 µs on the inference path
  digest: (secret) => hash("sha256", Redacted.value(secret), "hex")
}))
