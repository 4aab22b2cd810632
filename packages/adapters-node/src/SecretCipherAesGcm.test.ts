import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { makeSecretCipher } from "./SecretCipherAesGcm.ts"

describe("SecretCipherAesGcm", () => {
  const cipher = makeSecretCipher(Redacted.make(new Uint8Array(randomBytes(32))))

  it.effect("round-trips and never stores the plain text", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.seal(Redacted.make("sk-or-secret-value"))
      assert.isFalse(sealed.includes("sk-or-secret-value"))
      assert.strictEqual(Redacted.value(yield* cipher.open(sealed)), "sk-or-secret-value")
    }))

  it.effect("uses a fresh nonce each time", () =>
    Effect.gen(function*() {
      const a = yield* cipher.seal(Redacted.make("same"))
      const b = yield* cipher.seal(Redacted.make("same"))
      assert.notStrictEqual(a, b)
    }))

  it.effect("a tampered value or another key does not open", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.seal(Redacted.make("secret"))
      const other = makeSecretCipher(Redacted.make(new Uint8Array(randomBytes(32))))
      const tampered = sealed.slice(0, -4) + (sealed.endsWith("AAAA") ? "BBBB" : "AAAA")
      assert.isTrue((yield* Effect.exit(other.open(sealed)))._tag === "Failure")
      assert.isTrue((yield* Effect.exit(cipher.open(tampered)))._tag === "Failure")
    }))
})
