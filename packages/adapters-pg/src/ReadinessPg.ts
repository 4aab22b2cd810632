import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Readiness } from "@podium/domain/shared"

const layer = Layer.effect(
  Readiness,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Readiness.of({
      database: sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(true),
        Effect.catchCause(() => Effect.succeed(false))
      )
    })
  })
)

export const ReadinessPg = { layer }
