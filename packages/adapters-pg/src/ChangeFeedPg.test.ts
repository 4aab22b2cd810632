import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { Copies, maxAgeMillis } from "./ChangeFeedPg.ts"

interface Row {
  readonly id: string
  readonly version: number
}

/** A "database" of one row per key that counts its reads. */
const table = () => {
  const rows = new Map<string, Row>()
  let reads = 0
  return {
    rows,
    reads: () => reads,
    load: (key: string) => Effect.sync(() => (reads++, Option.fromNullishOr(rows.get(key))))
  }
}

const listening = (maxEntries?: number) => {
  const copies = new Copies<Row>({ tagOf: (row) => row.id, maxEntries })
  copies.listening(true)
  return copies
}

describe("Copies", () => {
  it.effect("keeps what it read and serves it until the tag is dropped", () =>
    Effect.gen(function*() {
      const db = table()
      const copies = listening()
      db.rows.set("a", { id: "a", version: 1 })
      yield* copies.get("a", db.load("a"))
      db.rows.set("a", { id: "a", version: 2 })
      assert.strictEqual(Option.getOrThrow(yield* copies.get("a", db.load("a"))).version, 1)
      assert.strictEqual(db.reads(), 1)
      copies.drop("a")
      assert.strictEqual(Option.getOrThrow(yield* copies.get("a", db.load("a"))).version, 2)
      assert.strictEqual(db.reads(), 2)
    }))

  it.effect("never keeps a miss, so a row created later is found", () =>
    Effect.gen(function*() {
      const db = table()
      const copies = listening()
      assert.isTrue(Option.isNone(yield* copies.get("a", db.load("a"))))
      db.rows.set("a", { id: "a", version: 1 })
      assert.isTrue(Option.isSome(yield* copies.get("a", db.load("a"))))
    }))

  it.effect("a read that raced with a change is returned but not kept", () =>
    Effect.gen(function*() {
      const db = table()
      const copies = listening()
      db.rows.set("a", { id: "a", version: 1 })
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // reads version 1, then is slow to come back
      const slowRead = db.load("a").pipe(
        Effect.tap(() => Deferred.succeed(started, undefined)),
        Effect.tap(() => Deferred.await(release))
      )
      const fiber = yield* Effect.forkChild(copies.get("a", slowRead))
      yield* Deferred.await(started)
      copies.drop("a") // the change commits while the read is in flight
      db.rows.set("a", { id: "a", version: 2 })
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(Option.getOrThrow(yield* Fiber.join(fiber)).version, 1)
      assert.strictEqual(Option.getOrThrow(yield* copies.get("a", db.load("a"))).version, 2)
    }))

  it.effect("copies nothing until listening, and forgets everything when listening stops or restarts", () =>
    Effect.gen(function*() {
      const db = table()
      const copies = new Copies<Row>({ tagOf: (row) => row.id })
      db.rows.set("a", { id: "a", version: 1 })
      yield* copies.get("a", db.load("a"))
      yield* copies.get("a", db.load("a"))
      assert.strictEqual(db.reads(), 2)
      copies.listening(true)
      yield* copies.get("a", db.load("a"))
      assert.strictEqual(copies.size, 1)
      copies.listening(false)
      assert.strictEqual(copies.size, 0)
      copies.listening(true)
      assert.strictEqual(copies.size, 0)
    }))

  it.effect("drops by tag when keys differ from tags (tokens keyed by secret hash, announced by id)", () =>
    Effect.gen(function*() {
      const copies = listening()
      yield* copies.get("hash-1", Effect.succeed(Option.some({ id: "t1", version: 1 })))
      yield* copies.get("hash-2", Effect.succeed(Option.some({ id: "t2", version: 1 })))
      copies.update("t1", (row) => ({ ...row, version: 7 }))
      assert.strictEqual(Option.getOrThrow(yield* copies.get("hash-1", Effect.die("unused"))).version, 7)
      copies.drop("t1")
      assert.strictEqual(copies.size, 1)
      assert.strictEqual(Option.getOrThrow(yield* copies.get("hash-2", Effect.die("unused"))).id, "t2")
    }))

  it.effect("holds at most maxEntries, evicting the oldest", () =>
    Effect.gen(function*() {
      const copies = listening(3)
      for (const id of ["a", "b", "c", "d"]) yield* copies.get(id, Effect.succeed(Option.some({ id, version: 1 })))
      assert.strictEqual(copies.size, 3)
      const db = table()
      db.rows.set("a", { id: "a", version: 2 })
      assert.strictEqual(Option.getOrThrow(yield* copies.get("a", db.load("a"))).version, 2)
    }))

  it.effect("reads again once a copy is older than maxAgeMillis", () =>
    Effect.gen(function*() {
      const db = table()
      const copies = listening()
      db.rows.set("a", { id: "a", version: 1 })
      yield* copies.get("a", db.load("a"))
      yield* TestClock.adjust(Duration.millis(maxAgeMillis - 1))
      yield* copies.get("a", db.load("a"))
      assert.strictEqual(db.reads(), 1)
      yield* TestClock.adjust(Duration.millis(1))
      yield* copies.get("a", db.load("a"))
      assert.strictEqual(db.reads(), 2)
    }))
})
