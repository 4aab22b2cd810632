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
  /** The next id's 36 characters, as ASCII, at `at` in `out`. */
  const write = (nowMs: number, out: Uint8Array, at: number) => {
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
    const r = take(8)
    const high = Math.floor(ms / 0x10000)
    const version = 0x7000 | counter
    hex(out, at, high >>> 24)
    hex(out, at + 2, (high >>> 16) & 0xff)
    hex(out, at + 4, (high >>> 8) & 0xff)
    hex(out, at + 6, high & 0xff)
    out[at + 8] = dash
    hex(out, at + 9, (ms % 0x10000) >>> 8)
    hex(out, at + 11, ms & 0xff)
    out[at + 13] = dash
    hex(out, at + 14, version >>> 8)
    hex(out, at + 16, version & 0xff)
    out[at + 18] = dash
    hex(out, at + 19, 0x80 | (pool[r]! & 0x3f))
    hex(out, at + 21, pool[r + 1]!)
    out[at + 23] = dash
    for (let i = 2; i < 8; i++) hex(out, at + 20 + 2 * i, pool[r + i]!)
  }
  const one = Buffer.allocUnsafe(36)
  /** The next id. */
  const next = (nowMs: number): string => {
    write(nowMs, one, 0)
    return one.toString("latin1")
  }
  /**
   * The next `count` ids: written side by side into one buffer and read as one string, each id a
   * slice of it (a thousand ids are a few dozen kilobytes and two allocations per id fewer).
   */
  const many = (nowMs: number, count: number): Array<string> => {
    const out = Buffer.allocUnsafe(count * 36)
    for (let i = 0; i < count; i++) write(nowMs, out, i * 36)
    const text = out.toString("latin1")
    const ids = new Array<string>(count)
    for (let i = 0; i < count; i++) ids[i] = text.slice(i * 36, i * 36 + 36)
    return ids
  }
  return Object.assign(next, { many })
}

const dash = 0x2d
const hexDigits = Buffer.from("0123456789abcdef", "latin1")
/** `byte` as two lower-case hex digits at `at` in `out`. */
const hex = (out: Uint8Array, at: number, byte: number) => {
  out[at] = hexDigits[byte >>> 4]!
  out[at + 1] = hexDigits[byte & 0xf]!
}

const layer = Layer.sync(IdGenerator, () => {
  const next = makeUuidV7()
  return IdGenerator.fromUuids({
    next: Effect.clockWith((clock) => Effect.sync(() => next(clock.currentTimeMillisUnsafe()))),
    nextMany: (count) =>
      Effect.clockWith((clock) => Effect.sync(() => next.many(clock.currentTimeMillisUnsafe(), count)))
  })
})

export const IdGeneratorUuidV7 = { layer }
