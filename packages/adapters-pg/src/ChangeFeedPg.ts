import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Option, Queue, Schedule } from "effect"

/** The channel migration 0006's triggers announce committed changes on, as `<topic>:<key>`. */
export const channel = "podium_changes"

/** What the announcements name: the row kinds that requests read on every call. */
export type Topic = "api_token" | "leaderboard" | "integration" | "model" | "user" | "membership" | "invite"

export interface CopiesOptions<A> {
  /** The key announcements use for a value (a token's id where copies are keyed by secret hash). */
  readonly tagOf: (value: A) => string
  /** Default 10,000; past it the oldest copy goes. */
  readonly maxEntries?: number | undefined
}

/**
 * A safety net should an announcement be lost without the listening connection failing (a
 * half-open socket): no copy is older than this.
 */
export const maxAgeMillis = 60_000

interface Entry<A> {
  readonly value: A
  readonly tag: string
  readonly storedAt: number
}

/**
 * This instance's copies of rows that requests read on every call, by key. A copy is dropped when
 * the database announces a change to its tag, when this instance changes it, or after
 * `maxAgeMillis`. Nothing is copied while the instance is not listening for announcements, and
 * a read that raced with a change is not kept: every change bumps a generation, and a value read
 * under an older generation is returned but not stored.
 */
export class Copies<A> {
  readonly #entries = new Map<string, Entry<A>>()
  readonly #keysByTag = new Map<string, Set<string>>()
  readonly #tagOf: (value: A) => string
  readonly #maxEntries: number
  #generation = 0
  #listening = false

  constructor(options: CopiesOptions<A>) {
    this.#tagOf = options.tagOf
    this.#maxEntries = options.maxEntries ?? 10_000
  }

  /** The copy under `key`, else what `load` finds (kept when it is Some and nothing changed meanwhile). */
  get<E, R>(key: string, load: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<Option.Option<A>, E, R> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const hit = this.#entries.get(key)
      if (hit !== undefined && now - hit.storedAt < maxAgeMillis) return Effect.succeed(Option.some(hit.value))
      const generation = this.#generation
      return Effect.map(load, (found) => {
        if (Option.isSome(found) && this.#listening && generation === this.#generation) this.#store(key, found.value, now)
        return found
      })
    })
  }

  /** Drops every copy tagged `tag`: after this instance changed it, or when the database says so. */
  drop(tag: string): void {
    this.#generation++
    const keys = this.#keysByTag.get(tag)
    if (keys === undefined) return
    for (const key of keys) this.#entries.delete(key)
    this.#keysByTag.delete(tag)
  }

  /** Replaces the copies tagged `tag` with `f` of them (for a field nobody caches a decision on). */
  update(tag: string, f: (value: A) => A): void {
    for (const key of this.#keysByTag.get(tag) ?? []) {
      const entry = this.#entries.get(key)
      if (entry !== undefined) this.#entries.set(key, { ...entry, value: f(entry.value) })
    }
  }

  /** Whether announcements arrive; either way every copy made so far goes. */
  listening(on: boolean): void {
    this.#generation++
    this.#listening = on
    this.#entries.clear()
    this.#keysByTag.clear()
  }

  get size(): number {
    return this.#entries.size
  }

  #store(key: string, value: A, now: number): void {
    this.#remove(key)
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#remove(oldest.value)
    }
    const tag = this.#tagOf(value)
    this.#entries.set(key, { value, tag, storedAt: now })
    const keys = this.#keysByTag.get(tag)
    if (keys === undefined) this.#keysByTag.set(tag, new Set([key]))
    else keys.add(key)
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    const keys = this.#keysByTag.get(entry.tag)
    keys?.delete(key)
    if (keys?.size === 0) this.#keysByTag.delete(entry.tag)
  }
}

/**
 * Instance-local copies of hot rows, kept coherent with the database: one connection LISTENs on
 * `channel`, and each announcement drops the copies it names. A change committed on another
 * instance (or by any writer) is seen here once its announcement arrives, normally within
 * milliseconds; a change made through this instance is seen at once, because the repository drops
 * its own copies after writing. If the listening connection fails, copying stops (every read goes
 * to the database) until LISTEN is confirmed again, so a missed announcement cannot leave a stale
 * copy behind.
 */
export class ChangeFeed extends Context.Service<ChangeFeed, {
  readonly copies: <A>(topic: Topic, options: CopiesOptions<A>) => Copies<A>
  /**
   * This instance wrote `topic:key`: drops its copies of it at once, in every repository that keeps
   * one (the database's announcement reaches the other instances, and this one again, later).
   */
  readonly changed: (topic: Topic, key: string) => Effect.Effect<void>
}>()("@podium/adapters-pg/ChangeFeedPg/ChangeFeed") {
  static readonly layer = Layer.effect(
    ChangeFeed,
    Effect.gen(function*() {
      const pg = yield* PgClient.PgClient
      const byTopic = new Map<string, Array<Copies<any>>>()
      let listening = false
      const setListening = (on: boolean) => {
        listening = on
        for (const all of byTopic.values()) for (const copies of all) copies.listening(on)
      }
      const announced = (payload: string) => {
        const colon = payload.indexOf(":")
        for (const copies of byTopic.get(payload.slice(0, colon)) ?? []) copies.drop(payload.slice(colon + 1))
      }

      const follow = Effect.scoped(Effect.gen(function*() {
        const announcements = yield* pg.listen(channel)
        setListening(true)
        for (;;) for (const { payload } of yield* Queue.takeAll(announcements)) announced(payload)
      })).pipe(
        Effect.ensuring(Effect.sync(() => setListening(false))),
        Effect.tapError((error) =>
          Effect.logWarning("change feed lost; reading through to the database until it is back").pipe(
            Effect.annotateLogs({ error: error.message })
          )
        ),
        Effect.retry(Schedule.spaced("1 second"))
      )
      yield* Effect.forkScoped(follow)

      return ChangeFeed.of({
        copies: <A>(topic: Topic, options: CopiesOptions<A>) => {
          const copies = new Copies<A>(options)
          copies.listening(listening)
          byTopic.set(topic, [...byTopic.get(topic) ?? [], copies])
          return copies
        },
        changed: (topic: Topic, key: string) => Effect.sync(() => announced(`${topic}:${key}`))
      })
    })
  )
}
