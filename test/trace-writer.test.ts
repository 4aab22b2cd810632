import { assert, describe, it } from "vitest"
import { Context, DateTime, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { queueCapacity, TraceWriterPg } from "@podium/adapters-pg/inference/TraceWriterPg"
import { WorkspaceId, IdGenerator } from "@podium/domain/shared"
import { TraceId, TraceWriter, type Trace } from "@podium/domain/inference"
import { TestDatabase } from "./support/database.ts"

const Database = layerMigrations.pipe(Layer.provideMerge(TestDatabase.layer), Layer.provideMerge(IdGeneratorUuidV7.layer))

const trace = (leaderboard: string) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    return {
      id: yield* ids.make(TraceId),
      workspace_id: WorkspaceId.make("0190a000-0000-7000-8000-000000000001"),
      leaderboard_id: leaderboard,
      leaderboard_model_id: null,
      source: "inference",
      run_id: null,
      input: "What is 2+2?",
      messages: [{ role: "user", content: "What is 2+2?" }],
      output: "4",
      status: "success",
      error: null,
      latency_ms: 12.5,
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      cost_usd: 0.000001,
      token_id: null,
      created_at: yield* DateTime.now
    } satisfies Trace
  })

const rowsOf = (leaderboard: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ rows: number; transactions: number }>`
      SELECT count(*)::int AS rows, count(DISTINCT xmin::text)::int AS transactions
      FROM traces WHERE leaderboard_id = ${leaderboard}`
    return row!
  })

/** A writer of its own, closed when the test closes `scope`. */
const openWriter = Effect.gen(function*() {
  const scope = yield* Scope.make()
  return { scope, writer: Context.get(yield* Layer.buildWithScope(TraceWriterPg.layer, scope), TraceWriter) }
})

/** Real time: the writer's flush waits on the clock, which `it.effect`'s TestClock would freeze. */
const live = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof Database>>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Database)) as Effect.Effect<A, E>)

describe("TraceWriterPg.layer", () => {
  describe("group commit", () => {
    it("writes every trace, many per INSERT under load", () =>
      live(Effect.gen(function*() {
        const leaderboard = crypto.randomUUID()
        const { scope, writer } = yield* openWriter
        const traces = yield* Effect.all(Array.from({ length: 2500 }, () => trace(leaderboard)))
        yield* Effect.forEach(traces, writer.record, { concurrency: "unbounded" })
        yield* writer.flush
        const { rows, transactions } = yield* rowsOf(leaderboard)
        assert.strictEqual(rows, 2500)
        assert.isAtLeast(transactions, 3) // batches of at most 1000
        assert.isBelow(transactions, 100) // grouped, not one INSERT per trace
        yield* Scope.close(scope, Exit.void)
      })))

    it("closing the writer writes what is still queued", () =>
      live(Effect.gen(function*() {
        const leaderboard = crypto.randomUUID()
        const { scope, writer } = yield* openWriter
        for (let i = 0; i < 300; i++) yield* writer.record(yield* trace(leaderboard))
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual((yield* rowsOf(leaderboard)).rows, 300)
      })))
  })

  describe("data the database refuses", () => {
    it("stores U+0000 and lone surrogates as U+FFFD", () =>
      live(Effect.gen(function*() {
        const leaderboard = crypto.randomUUID()
        const { scope, writer } = yield* openWriter
        const base = yield* trace(leaderboard)
        yield* writer.record({
          ...base,
          input: "a\u0000b",
          output: "x\ud800y",
          error: "\udc00",
          messages: [{ role: "user", content: "c\u0000d\ud83d" }]
        })
        yield* writer.flush
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ input: string; output: string; error: string; content: string }>`
          SELECT input, output, error, messages->0->>'content' AS content FROM traces WHERE id = ${base.id}`
        assert.deepStrictEqual(row, { input: "a\uFFFDb", output: "x\uFFFDy", error: "\uFFFD", content: "c\uFFFDd\uFFFD" })
        yield* Scope.close(scope, Exit.void)
      })))

    it("sets a refused row aside and writes the 10,000 traces after it", () =>
      live(Effect.gen(function*() {
        const leaderboard = crypto.randomUUID()
        const { scope, writer } = yield* openWriter
        const poisoned = { ...yield* trace(leaderboard), leaderboard_model_id: "not-a-uuid" }
        yield* writer.record(poisoned)
        const traces = yield* Effect.all(Array.from({ length: 10_000 }, () => trace(leaderboard)))
        yield* Effect.forEach(traces, writer.record, { concurrency: "unbounded" })
        yield* writer.flush.pipe(Effect.timeout("60 seconds"))
        assert.strictEqual((yield* rowsOf(leaderboard)).rows, 10_000)
        yield* Scope.close(scope, Exit.void)
      })), 90_000)

    it("holds callers once the queue is full, and loses none of them", () =>
      live(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const leaderboard = crypto.randomUUID()
        const { scope, writer } = yield* openWriter
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const lock = yield* sql.withTransaction(
          sql`LOCK TABLE traces IN EXCLUSIVE MODE`.pipe(
            Effect.andThen(Deferred.succeed(locked, undefined)),
            Effect.andThen(Deferred.await(release))
          )
        ).pipe(Effect.forkChild)
        yield* Deferred.await(locked)
        const total = queueCapacity + 3_000
        let returned = 0
        const traces = yield* Effect.all(Array.from({ length: total }, () => trace(leaderboard)))
        const recording = yield* Effect.forEach(traces, (t) => Effect.tap(writer.record(t), () => Effect.sync(() => returned++)), {
          concurrency: "unbounded"
        }).pipe(Effect.forkChild)
        yield* Effect.sleep("1 second")
        // one batch in the blocked INSERT, at most a batch more in hand, the rest in the queue
        assert.isBelow(returned, total)
        assert.isAtMost(returned, queueCapacity + 2_000)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(lock)
        yield* Fiber.join(recording)
        yield* writer.flush.pipe(Effect.timeout("60 seconds"))
        assert.strictEqual((yield* rowsOf(leaderboard)).rows, total)
        yield* Scope.close(scope, Exit.void)
      })), 90_000)
  })
})
