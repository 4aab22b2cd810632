import { Effect, Layer } from "effect"
import { IdGenerator } from "@podium/domain/shared"
import { randomFillSync } from "node:crypto"

/**
 * RFC 9562 UUIDv7 with a 12-bit counter in `rand_a` (method 1), so ids made by one process sort in
 * the order they were made, even within a millisecond: 48 bits of Unix milliseconds, version, the
 * counter (seeded randomly each millisecond, below 2^11 to leave room), variant, 62 random bits.
 */
export const makeUuidV7 = (random: (bytes: Uint8Array) => void = (b) => void randomFillSync(b)) => {
  let lastMs = -1
  let counter = 0
  const bytes = new Uint8Array(16)
  const seed = new Uint8Array(2)
  const freshCounter = () => {
    random(seed)
    return ((seed[0]! << 8) | seed[1]!) & 0x7ff
  }
  return (nowMs: number): string => {
    let ms = Math.max(nowMs, lastMs)
    if (ms === lastMs) {
      counter++
      if (counter > 0xfff) {
        ms++
        counter = freshCounter()
      }
    } else {
      counter = freshCounter()
    }
    lastMs = ms
    let t = ms
    for (let i = 5; i >= 0; i--) {
      bytes[i] = t % 256
      t = Math.floor(t / 256)
    }
    random(bytes.subarray(8))
    bytes[6] = 0x70 | (counter >> 8)
    bytes[7] = counter & 0xff
    bytes[8] = 0x80 | (bytes[8]! & 0x3f)
    const hex = Buffer.from(bytes).toString("hex")
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
}

const layer = Layer.sync(IdGenerator, () => {
  const next = makeUuidV7()
  return IdGenerator.of({
    next: Effect.clockWith((clock) => Effect.sync(() => next(clock.currentTimeMillisUnsafe())))
  })
})

export const IdGeneratorUuidV7 = { layer }
