import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { TokenSecretsNode } from "@podium/adapters-node/access/TokenSecretsNode"
import { ApiTokenRepositoryPg } from "@podium/adapters-pg/access/ApiTokenRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { InviteRepositoryPg } from "@podium/adapters-pg/access/InviteRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { PushTokenRepositoryPg } from "@podium/adapters-pg/access/PushTokenRepositoryPg"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import {
  PushTokenPrefix,
  Unauthenticated,
  SessionVerifier,
  TokenSecrets,
  Authentication,
  Identity,
} from "@podium/domain/access"
import { TestDatabase } from "./support/database.ts"

/** Sessions are not under test here: every session token is refused. */
const NoSessions = Layer.succeed(SessionVerifier, SessionVerifier.of({
  verify: () => Effect.fail(new Unauthenticated({ message: "no sessions in this test" }))
}))

const AuthenticationPg = Authentication.layer.pipe(
  Layer.provide(Identity.layer),
  Layer.provideMerge(Layer.mergeAll(
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    ApiTokenRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    PushTokenRepositoryPg.layer,
    InviteRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    IdGeneratorUuidV7.layer,
    TokenSecretsNode,
    NoSessions
  )),
  Layer.provideMerge(layerMigrations),
  Layer.provideMerge(TestDatabase.layer)
)

/** A push token row for a leaderboard, as the push-datasets work will create them. */
const insertPushToken = (revoked: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* TokenSecrets
    const minted = yield* secrets.mint(PushTokenPrefix)
    const workspace = crypto.randomUUID()
    const leaderboard = crypto.randomUUID()
    yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'push', now())`
    yield* sql`INSERT INTO push_tokens (id, workspace_id, leaderboard_id, name, display_prefix, secret_hash, created_at,
                 revoked_at)
               VALUES (${crypto.randomUUID()}, ${workspace}, ${leaderboard}, 'collector', ${minted.displayPrefix},
                 ${minted.hash}, now(), ${revoked ? new Date() : null})`
    return { secret: minted.secret, workspace, leaderboard }
  })

layer(AuthenticationPg)("push tokens", (it) => {
  describe("Authentication.pushToken", () => {
    it.effect("an active push token is its leaderboard's credential", () =>
      Effect.gen(function*() {
        const auth = yield* Authentication
        const { leaderboard, secret, workspace } = yield* insertPushToken(false)
        assert.isTrue(Redacted.value(secret).startsWith("hpd_"))
        const principal = yield* auth.pushToken(secret)
        assert.deepStrictEqual(
          principal._tag === "PushTokenPrincipal" ? [principal.workspaceId, principal.leaderboardId] : [],
          [workspace, leaderboard]
        )
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ used: boolean }>`SELECT last_used_at IS NOT NULL AS used FROM push_tokens
                                                    WHERE leaderboard_id = ${leaderboard}`
        assert.isTrue(row?.used)
      }))

    it.effect("a revoked or unknown push token is refused, and an API token is no push token", () =>
      Effect.gen(function*() {
        const auth = yield* Authentication
        const revoked = yield* insertPushToken(true)
        const refused = yield* Effect.exit(auth.pushToken(revoked.secret))
        assert.isTrue(Exit.isFailure(refused))
        const unknown = yield* Effect.exit(auth.pushToken(Redacted.make("hpd_not-a-real-token")))
        assert.isTrue(Exit.isFailure(unknown))
        const asApiToken = yield* Effect.exit(auth.apiToken(revoked.secret))
        assert.isTrue(Exit.isFailure(asApiToken))
      }))
  })
})
