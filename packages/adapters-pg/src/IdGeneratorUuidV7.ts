import { Effect, Layer } from "effect"
import { IdGenerator } from "@podium/domain/ports/IdGenerator"
import { randomFillSync } from "node:crypto"

/** RFC 9562 UUIDv7: 48 bits of Unix milliseconds, then version, variant and 74 random bits. */
export const uuidv7 = (ms: number, random: Uint8Array = randomFillSync(new Uint8Array(10))): string => {
  const bytes = new Uint8Array(16)
  let t = ms
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256
    t = Math.floor(t / 256)
  }
  bytes.set(random, 6)
  bytes[6] = 0x70 | (bytes[6]! & 0x0f)
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = Buffer.from(bytes).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const IdGeneratorUuidV7 = Layer.succeed(IdGenerator, IdGenerator.of({
  next: Effect.clockWith((clock) => Effect.sync(() => uuidv7(clock.currentTimeMillisUnsafe())))
}))
