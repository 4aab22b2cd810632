import { NodeServices } from "@effect/platform-node"
import { serviceVersion } from "@podium/adapters-http/api/Api"
import { connect } from "node:net"
import { ConfigProvider, Console, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { TokenSecretsNode } from "@podium/adapters-node/access/TokenSecretsNode"
import { ApiTokenRepositoryPg } from "@podium/adapters-pg/access/ApiTokenRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { runMigrations } from "@podium/adapters-pg/Migrations"
import { ApiTokens, ExpiresIn, RequestedScopes, Scopes } from "@podium/domain/access"
import { layerApp } from "./App.ts"
import { layerDatabase, layerDatabaseClient } from "./Database.ts"
import { layerCommandLogging, layerLogging } from "./Logging.ts"
import { loadConfig, PodiumConfig } from "./Config.ts"
import { mintDevSession } from "./DevSession.ts"
import { evalCommand } from "./EvalCommand.ts"

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

/** The environment variables the configuration reads, in its order: what it asks of a provider that has none. */
const environmentVariables = (() => {
  const names = new Set<string>()
  Effect.runSync(PodiumConfig.parse(ConfigProvider.make((path) => {
    names.add(path.join("_"))
    return Effect.undefined
  })).pipe(Effect.ignore))
  return [...names]
})()

/** Names joined by commas, in lines of at most 100 characters after `indent`. */
const wrapped = (names: ReadonlyArray<string>, indent: string) =>
  names.reduce<Array<string>>((lines, name, i) => {
    const item = i === names.length - 1 ? name : `${name},`
    const last = lines.at(-1)
    if (last !== undefined && last.length + 1 + item.length <= 100) lines[lines.length - 1] = `${last} ${item}`
    else lines.push(item)
    return lines
  }, []).map((line) => indent + line).join("\n")

/** Set when SIGINT or SIGTERM arrives (the runtime's own handlers then interrupt the service). */
const signalled = { stopping: false }

/**
 * Past the HTTP drain (SHUTDOWN_GRACE_SECONDS), the jobs, the database pool and an embedded
 * PostgreSQL get this long to stop; a stop that overruns it ends the process with exit code 1.
 */
const stopMarginSeconds = 15

const onStopSignal = (config: PodiumConfig) => () => {
  signalled.stopping = true
  setTimeout(() => {
    process.stderr.write(`podium: not stopped ${config.shutdownGraceSeconds + stopMarginSeconds} s after the signal; exiting\n`)
    process.exit(1)
  }, (config.shutdownGraceSeconds + stopMarginSeconds) * 1_000).unref()
}

const serve = Command.make("serve", {}, () =>
  withConfig((config) =>
    Effect.andThen(
      Effect.andThen(checkPort(config), Effect.sync(() => {
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, onStopSignal(config))
      })),
      Layer.launch(layerApp(config, () => signalled.stopping).pipe(Layer.provide(layerLogging(config, () => signalled.stopping))))
    )
  )
).pipe(
  Command.withShortDescription("Run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)"),
  Command.withDescription(
    "Run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set).\n\n" +
      "  It reads these environment variables (README, Configuration, says what each does):\n" +
      wrapped(environmentVariables, "    ")
  )
)

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
      Effect.provide(layerDatabaseClient(config)),
      Effect.provide(layerCommandLogging(config))
    )
  )
).pipe(Command.withDescription("Apply pending database migrations and exit"))

const Email = Schema.String.check(Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "Expected an email address" }))

const tokenCreate = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDefault("bootstrap"), Flag.withDescription("A label for the token")),
  businessId: Flag.String("business-id").pipe(Flag.optional, Flag.withDescription("The workspace id")),
  email: Flag.String("email").pipe(Flag.withSchema(Email), Flag.optional, Flag.withDescription("Use this user's personal workspace")),
  scopes: Flag.String("scopes").pipe(Flag.withDefault(Scopes.join(",")), Flag.withDescription("Comma-separated scopes")),
  expiresIn: Flag.Literals("expires-in", ExpiresIn.literals).pipe(Flag.withDefault("none" as const))
}, ({ businessId, email, expiresIn, name, scopes }) =>
  Effect.gen(function*() {
    // the arguments are checked before anything (the embedded database) starts
    const scopeList = yield* Schema.decodeUnknownEffect(RequestedScopes)(scopes.split(",").map((s) => s.trim()))
    const workspace = Option.isSome(businessId)
      ? { id: businessId.value }
      : Option.isSome(email)
      ? { ownerEmail: email.value }
      : yield* Effect.fail(new Error("Give --business-id or --email"))
    const config = yield* loadConfig()
    yield* Effect.gen(function*() {
      const tokens = yield* ApiTokens
      const { secret, token } = yield* tokens.bootstrap(workspace, { name, scopes: scopeList, expires_in: expiresIn }).pipe(
        Effect.catchTag("NotFound", () =>
          Effect.fail(new Error("id" in workspace
            ? `No workspace ${workspace.id}`
            : `No user with email ${workspace.ownerEmail} has signed in yet (try: npm run --silent podium -- dev-session --email ${workspace.ownerEmail}, then any API call)`)))
      )
      const workspaceId = token.workspace_id
      yield* Console.log(JSON.stringify({ id: token.id, business_id: workspaceId, scopes: scopeList, secret: Redacted.value(secret) }))
    }).pipe(
      Effect.provide(ApiTokens.layer.pipe(Layer.provide(Layer.mergeAll(
        Layer.mergeAll(ApiTokenRepositoryPg.layer, WorkspaceRepositoryPg.layer).pipe(Layer.provide(ChangeFeed.layer)),
        IdGeneratorUuidV7.layer,
        TokenSecretsNode
      )))),
      Effect.provide(layerDatabase(config)),
      Effect.provide(layerCommandLogging(config))
    )
  })
).pipe(Command.withDescription("Create an API token for a workspace without a session (prints the secret once)"))

const token = Command.make("token").pipe(
  Command.withDescription("API tokens made from the command line (for a first token, or CI)"),
  Command.withSubcommands([tokenCreate])
)

const devSession = Command.make("dev-session", {
  email: Flag.String("email").pipe(Flag.withSchema(Email), Flag.withDescription("Who to sign in as")),
  ttl: Flag.Int("ttl").pipe(Flag.withDefault(3600), Flag.withDescription("Lifetime in seconds"))
}, ({ email, ttl }) =>
  withConfig((config) =>
    Effect.flatMap(mintDevSession(config, email, ttl), Console.log).pipe(Effect.provide(layerCommandLogging(config)))
  )
).pipe(Command.withDescription("Print a session JWT signed with the HS256 secret, for local use"))

export const podium = Command.make("podium").pipe(
  Command.withDescription("Podium: compare models, serve the winner, record every call"),
  Command.withSubcommands([serve, migrate, token, devSession, evalCommand])
)

export const run = Command.run(podium, { version: serviceVersion }).pipe(Effect.provide(NodeServices.layer))

