import { Clock, Context, Effect, Layer } from "effect"

/** The most client addresses tracked at once (about 100 bytes each); past it the least recently failed is forgotten. */
export const maxTrackedAddresses = 10_000

/**
 * Where failures are counted: an IPv4 address (also when written IPv4-mapped, `::ffff:a.b.c.d`), or
 * the /64 of an IPv6 address, since one host commonly holds a whole /64.
 */
export const clientKey = (address: string): string => {
  const bare = address.split("%")[0]!.toLowerCase()
  if (!bare.includes(":")) return bare
  if (bare.startsWith("::ffff:") && bare.includes(".")) return bare.slice(7)
  const [head = "", tail] = bare.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`
}

/**
 * Failed credentials per client address, as a token bucket: `perMinute` failures at once, refilled at
 * `perMinute` a minute. An address with less than one failure left waits (`retryAfter` seconds).
 * Only failures touch the table, so valid callers never wait on it. At most `maxAddresses` are
 * tracked, least recently failed forgotten first (by then usually refilled anyway). `now` is in
 * milliseconds.
 */
export const makeFailureTable = (perMinute: number, maxAddresses = maxTrackedAddresses) => {
  const buckets = new Map<string, { readonly left: number; readonly at: number }>()
  const perMs = perMinute / 60_000
  const left = (key: string, now: number) => {
    const bucket = buckets.get(key)
    return bucket === undefined ? perMinute : Math.min(perMinute, bucket.left + (now - bucket.at) * perMs)
  }
  return {
    /** Seconds until the address may present a credential again; 0 when it may now. */
    retryAfter: (address: string, now: number): number => {
      const remaining = left(clientKey(address), now)
      return remaining >= 1 ? 0 : Math.ceil((1 - remaining) / perMs / 1000)
    },
    /** Counts a failed credential against the address. */
    fail: (address: string, now: number): void => {
      const key = clientKey(address)
      const remaining = left(key, now) - 1
      // re-inserted, so the Map's order is least recently failed first
      buckets.delete(key)
      if (buckets.size >= maxAddresses) buckets.delete(buckets.keys().next().value!)
      buckets.set(key, { left: remaining, at: now })
    },
    size: (): number => buckets.size
  }
}

/**
 * Failed authentications per client address, in this instance's memory (each instance counts its
 * own). The request pipeline and the front door share one.
 */
export class FailedAuthentications extends Context.Service<FailedAuthentications, {
  /** Seconds the address must wait before presenting a credential; 0 when it may. */
  readonly retryAfter: (address: string | undefined) => Effect.Effect<number>
  readonly record: (address: string | undefined) => Effect.Effect<void>
}>()("@podium/adapters-http/auth/FailedAuthentications") {
  static readonly layer = (options: { readonly perMinute: number }) =>
    Layer.sync(FailedAuthentications, () => {
      const table = makeFailureTable(options.perMinute)
      return FailedAuthentications.of({
        retryAfter: (address) =>
          address === undefined ? Effect.succeed(0) : Effect.map(Clock.currentTimeMillis, (now) => table.retryAfter(address, now)),
        record: (address) =>
          address === undefined ? Effect.void : Effect.map(Clock.currentTimeMillis, (now) => table.fail(address, now))
      })
    })
}
