import { Effect, Layer, Redacted } from "effect"
import { SecretCipher } from "@podium/domain/shared"
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from "node:crypto"

const version = "v1"

/**
 * AES-256-GCM with a random 96-bit nonce per secret. Stored form: `v1:<base64(nonce | tag | ciphertext)>`.
 * A wrong key or a tampered value fails authentication and dies: that is a broken deployment, not input.
 */
export const makeSecretCipher = (key: Redacted.Redacted<Uint8Array>) => {
  const raw = Redacted.value(key)
  if (raw.length !== 32) throw new Error("SECRETS_KEY must decode to 32 bytes")
  // imported once: a raw key would be imported again by every cipher made from it
  const secretKey = createSecretKey(raw)
  return SecretCipher.of({
    seal: (plain) =>
      Effect.sync(() => {
        const nonce = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", secretKey, nonce)
        const body = Buffer.concat([cipher.update(Redacted.value(plain), "utf8"), cipher.final()])
        return `${version}:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString("base64")}`
      }),
    open: (sealed) =>
      Effect.sync(() => {
        const [tag, payload] = sealed.split(":")
        if (tag !== version || payload === undefined) throw new Error("Unknown sealed secret format")
        const bytes = Buffer.from(payload, "base64")
        const decipher = createDecipheriv("aes-256-gcm", secretKey, bytes.subarray(0, 12))
        decipher.setAuthTag(bytes.subarray(12, 28))
        const plain = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8")
        return Redacted.make(plain)
      })
  })
}

export const SecretCipherAesGcm = {
  layer: (key: Redacted.Redacted<Uint8Array>) => Layer.succeed(SecretCipher, makeSecretCipher(key))
}
