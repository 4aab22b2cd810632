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
  // random bytes are drawn a pool at a time: one system call per 512 ids, not one per id
  const pool = new Uint8Array(512 * 10)
  let used = pool.length
  const take = (n: number) => {
    if (used + n > pool.length) {
      random(pool)
      used = 0
    }
    used += n
    return used - n
  }
  const freshCounter = () => {
    const at = take(2)
    return ((pool[at]! << 8) | pool[at + 1]!) & 0x7ff
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
    const at = take(8)
    const high = Math.floor(ms / 0x10000)
    const low = ms % 0x10000
    return (
      hex4(Math.floor(high / 0x10000)) + hex4(high % 0x10000) + "-" + hex4(low) + "-" +
      hex4(0x7000 | counter) + "-" +
      hex2(0x80 | (pool[at]! & 0x3f)) + hex2(pool[at + 1]!) + "-" +
      hex2(pool[at + 2]!) + hex2(pool[at + 3]!) + hex2(pool[at + 4]!) + hex2(pool[at + 5]!) + hex2(pool[at + 6]!) +
      hex2(pool[at + 7]!)
    )
  }
}

const hexes = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))
const hex2 = (byte: number) => hexes[byte]!
const hex4 = (word: number) => hexes[word >> 8]! + hexes[word & 0xff]!

const layer = Layer.sync(IdGenerator, () => {
  const next = makeUuidV7()
  return IdGenerator.of({
    next: Effect.clockWith((clock) => Effect.sync(() => next(clock.currentTimeMillisUnsafe()))),
    nextMany: (count) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const ids = new Array<string>(count)
          for (let i = 0; i < count; i++) ids[i] = next(clock.currentTimeMillisUnsafe())
          return ids
        })
      )
  })
})

export const IdGeneratorUuidV7 = { layer }
