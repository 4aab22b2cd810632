import { NodeServices } from "@effect/platform-node"
import { serviceVersion } from "@podium/adapters-http/api/Api"
import { connect } from "node:net"
import { Console, DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { SqlClient } from "effect/sql"
import { TokenSecretsNode } from "@podium/adapters-http/auth/TokenSecretsNode"
import { ApiTokenRepositoryPg } from "@podium/adapters-pg/ApiTokenRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { IdGeneratorUuidV7 } from "@podium/adapters-pg/IdGeneratorUuidV7"
import { runMigrations } from "@podium/adapters-pg/Migrations"
import { ApiTokenPrefix, ExpiresIn, issue, RequestedScopes } from "@podium/domain/ApiToken"
import type { TokenId, WorkspaceId } from "@podium/domain/Ids"
import { ApiTokenRepository } from "@podium/domain/ports/ApiTokenRepository"
import { IdGenerator } from "@podium/domain/ports/IdGenerator"
import { TokenSecrets } from "@podium/domain/ports/TokenSecrets"
import { Scopes } from "@podium/domain/Scope"
import { AppLive, CommandLoggingLive, DatabaseClientLive, DatabaseLive, LoggingLive } from "./App.ts"
import { loadConfig, type PodiumConfig } from "./Config.ts"
import { mintDevSession } from "./DevSession.ts"

const withConfig = <A, E, R>(f: (config: PodiumConfig) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(loadConfig(), f)

/**
 * Fails with one clear line when something already listens on the port, before anything (the
 * database) starts. It connects rather than listens: a probe that listened would accept, then drop,
 * a client connecting in that moment.
 */
const checkPort = (config: PodiumConfig) =>
  Effect.callback<void, Error>((resume) => {
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host
    const socket = connect({ host, port: config.port })
    socket.setTimeout(1_000)
    const free = () => (socket.destroy(), resume(Effect.void))
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.fail(new Error(`PORT ${config.port} is in use on ${config.host}: stop what holds it or set PORT`)))
    })
    socket.once("error", free)
    socket.once("timeout", free)
  })

const serve = Command.make("serve", {}, () =>
  withConfig((config) =>
    Effect.andThen(checkPort(config), Layer.launch(AppLive(config).pipe(Layer.provide(LoggingLive(config)))))
  )
).pipe(Command.withDescription("Run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)"))

const migrate = Command.make("migrate", {}, () =>
  withConfig((config) =>
    runMigrations.pipe(
      Effect.flatMap((applied) =>
        Console.log(
          applied.length === 0
            ? "migrations: nothing to apply"
            : applied.map(([id, name]) => `migrations: applied ${String(id).padStart(4, "0")}_${name}`).join("\n")
        )
      ),
      Effect.provide(DatabaseClientLive(config)),
      Effect.provide(CommandLoggingLive(config))
    )
  )
).pipe(Command.withDescription("Apply pending database migrations and exit"))

const Email = Schema.String.check(Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "Expected an email address" }))

/** Finds the workspace a bootstrap token is for: by id, or the personal workspace of a user with that email. */
const findWorkspace = (businessId: Option.Option<string>, email: Option.Option<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = Option.isSome(businessId)
      ? yield* sql<{ id: string }>`SELECT id FROM workspaces WHERE id::text = ${businessId.value}`
      : Option.isSome(email)
      ? yield* sql<{ id: string }>`SELECT w.id FROM workspaces w JOIN users u ON u.id = w.personal_owner_id
                                  WHERE lower(u.email) = lower(${email.value})`
      : yield* Effect.fail(new Error("Give --business-id or --email"))
    const found = rows[0]
    if (found === undefined) {
      return yield* Effect.fail(new Error(
        Option.isSome(email)
          ? `No user with email ${email.value} has signed in yet (try: podium dev-session --email ${email.value}, then any API call)`
          : `No workspace ${Option.getOrElse(businessId, () => "")}`
      ))
    }
    return found.id as WorkspaceId
  })

const tokenCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDefault("bootstrap"), Flag.withDescription("A label for the token")),
  businessId: Flag.String("business-id").pipe(Flag.optional, Flag.withDescription("The workspace id")),
  email: Flag.String("email").pipe(Flag.withSchema(Email), Flag.optional, Flag.withDescription("Use this user's personal workspace")),
  scopes: Flag.String("scopes").pipe(Flag.withDefault(Scopes.join(",")), Flag.withDescription("Comma-separated scopes")),
  expiresIn: Flag.Literals("expires-in", ExpiresIn.literals).pipe(Flag.withDefault("none" as const))
}, ({ businessId, email, expiresIn, name, scopes }) =>
  withConfig((config) =>
    Effect.gen(function*() {
      const scopeList = yield* Schema.decodeUnknownEffect(RequestedScopes)(scopes.split(",").map((s) => s.trim()))
      const workspaceId = yield* findWorkspace(businessId, email)
      const secrets = yield* TokenSecrets
      const ids = yield* IdGenerator
      const repository = yield* ApiTokenRepository
      const minted = yield* secrets.mint(ApiTokenPrefix)
      const token = issue({ name, scopes: scopeList, expires_in: expiresIn }, {
        id: (yield* ids.next) as TokenId,
        workspaceId,
        displayPrefix: minted.displayPrefix,
        createdBy: null,
        now: yield* DateTime.now
      })
      yield* repository.insert(token, minted.hash)
      yield* Console.log(JSON.stringify({ id: token.id, business_id: workspaceId, scopes: scopeList, secret: Redacted.value(minted.secret) }))
    }).pipe(
      Effect.provide(Layer.mergeAll(ApiTokenRepositoryPg.pipe(Layer.provide(ChangeFeed.layer)), IdGeneratorUuidV7, TokenSecretsNode)),
      Effect.provide(DatabaseLive(config)),
      Effect.provide(CommandLoggingLive(config))
    )
  )
).pipe(Command.withDescription("Create an API token for a workspace without a session (prints the secret once)"))

const token = Command.make("token").pipe(Command.withSubcommands([tokenCreate]))

const devSession = Command.make("dev-session", {
  email: Flag.String("email").pipe(Flag.withSchema(Email), Flag.withDescription("Who to sign in as")),
  ttl: Flag.Int("ttl").pipe(Flag.withDefault(3600), Flag.withDescription("Lifetime in seconds"))
}, ({ email, ttl }) =>
  withConfig((config) => Effect.flatMap(mintDevSession(config, email, ttl), Console.log))
).pipe(Command.withDescription("Print a session JWT signed with the HS256 secret, for local use"))

export const podium = Command.make("podium").pipe(
  Command.withDescription("Podium: compare models, serve the winner, record every call"),
  Command.withSubcommands([serve, migrate, token, devSession])
)

export const run = Command.run(podium, { version: serviceVersion }).pipe(Effect.provide(NodeServices.layer))

