import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"

/** Runs one statement against `url` on a short-lived connection, for assertions about stored data. */
export const query = <Row extends object = Record<string, unknown>>(
  url: string,
  build: (sql: PgClient.PgClient) => Effect.Effect<ReadonlyArray<Row>, unknown>
): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
      return yield* build(sql)
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)) as Effect.Effect<ReadonlyArray<Row>>
  )
