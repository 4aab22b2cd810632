import { Config, ConfigProvider, Cron, Effect, LogLevel, Option, Redacted, Result, Schema, SchemaTransformation } from "effect"

/** `LOG_LEVEL` in any case (`info`, `INFO`, `Info`). */
const CaseInsensitiveLogLevel = Schema.String.pipe(Schema.decodeTo(
  Schema.Literals(LogLevel.values),
  SchemaTransformation.transform<LogLevel.LogLevel, string>({
    decode: (text) => (LogLevel.values.find((level) => level.toLowerCase() === text.trim().toLowerCase()) ?? text) as LogLevel.LogLevel,
    encode: (level) => level
  })
))

const HttpUrl = Schema.String.check(
  Schema.isPattern(/^https?:\/\/[^\s/]+.*$/, { message: "Expected an http(s) URL" })
)
const optionalUrl = (name: string) => Config.option(Config.schema(HttpUrl, name))

/** 32 bytes, as 64 hex characters or base64. */
const SecretsKey = Schema.Redacted(Schema.String.check(
  Schema.makeFilter((s: string) =>
    (/^[0-9a-fA-F]{64}$/.test(s) || Buffer.from(s, "base64").length === 32) ||
    "Expected 32 bytes as 64 hex characters or base64"
  )
))

/** A cron expression of five fields, or six with seconds first, as effect's `Cron.parse` reads it. */
const CronExpression = Schema.String.check(
  Schema.makeFilter((s: string) =>
    Result.isSuccess(Cron.parse(s)) || "Expected a cron expression of 5 fields (or 6, seconds first)"
  )
)

/** A whole number from `minimum` to `maximum`, `fallback` when unset. */
const wholeNumber = (name: string, minimum: number, maximum: number, fallback: number) =>
  Config.schema(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum, maximum })), name).pipe(
    Config.withDefault(fallback)
  )

/** Everything Podium reads from its environment. A bad value stops the start with a message naming it. */
export const PodiumConfig = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./.podium")),
  sessionJwtSecret: Config.option(Config.schema(
    Schema.Redacted(Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" }))),
    "SESSION_JWT_SECRET"
  )),
  sessionJwksUrl: optionalUrl("SESSION_JWKS_URL"),
  sessionJwtIssuer: Config.option(Config.String("SESSION_JWT_ISSUER")),
  sessionJwtAudience: Config.option(Config.String("SESSION_JWT_AUDIENCE")),
  /** The longest a session may last from its `iat`, in seconds (a minute to a year). */
  sessionMaxAge: wholeNumber("SESSION_MAX_AGE", 60, 31_536_000, 86_400),
  /** Comma-separated issuers (`iss`) whose sessions' emails count as verified when they send no `email_verified`. */
  sessionTrustedEmailIssuers: Config.String("SESSION_TRUSTED_EMAIL_ISSUERS").pipe(
    Config.map((issuers) => issuers.split(",").map((i) => i.trim()).filter((i) => i !== "")),
    Config.withDefault<ReadonlyArray<string>>([])
  ),
  oidcIssuer: optionalUrl("OIDC_ISSUER"),
  oidcClientId: Config.option(Config.String("OIDC_CLIENT_ID")),
  secretsKey: Config.option(Config.schema(SecretsKey, "SECRETS_KEY")),
  publicBaseUrl: optionalUrl("PUBLIC_BASE_URL"),
  smtpUrl: Config.option(Config.Redacted("SMTP_URL")),
  mailFrom: Config.String("MAIL_FROM").pipe(Config.withDefault("Podium <podium@localhost>")),
  routerBaseUrl: optionalUrl("ROUTER_BASE_URL"),
  hubBaseUrl: optionalUrl("HUB_BASE_URL"),
  providerTimeoutMs: wholeNumber("PROVIDER_TIMEOUT_MS", 100, 600_000, 60_000),
  /** A connection must send a request's headers within this time of opening: one that sends nothing is closed. */
  httpHeadersTimeoutMs: wholeNumber("HTTP_HEADERS_TIMEOUT_MS", 100, 300_000, 60_000),
  /** How long an idle keep-alive connection is kept between requests. */
  httpKeepAliveTimeoutMs: wholeNumber("HTTP_KEEP_ALIVE_TIMEOUT_MS", 100, 300_000, 5_000),
  /** On SIGTERM or SIGINT, how long requests in flight may take to finish before their connections are cut. */
  shutdownGraceSeconds: wholeNumber("SHUTDOWN_GRACE_SECONDS", 1, 3_600, 20),
  /** Credentials that may fail per client address and minute before it is answered 429. */
  authFailuresPerMinute: wholeNumber("AUTH_FAILURES_PER_MINUTE", 1, 1_000_000, 100),
  budgetDefaultMaxTokens: wholeNumber("BUDGET_DEFAULT_MAX_TOKENS", 1, 1_000_000, 4096),
  runConcurrency: wholeNumber("RUN_CONCURRENCY", 1, 256, 8),
  datasetConsolidationCron: Config.schema(CronExpression, "DATASET_CONSOLIDATION_CRON").pipe(Config.withDefault("* * * * *")),
  runSchedulerCron: Config.schema(CronExpression, "RUN_SCHEDULER_CRON").pipe(Config.withDefault("* * * * *")),
  fineTuneBaseUrl: optionalUrl("FINE_TUNE_BASE_URL"),
  fineTuneApiKey: Config.option(Config.Redacted("FINE_TUNE_API_KEY")),
  /** Comma-separated model names the `openai` trainer offers. */
  fineTuneBaseModels: Config.String("FINE_TUNE_BASE_MODELS").pipe(
    Config.map((names) => names.split(",").map((n) => n.trim()).filter((n) => n !== "")),
    Config.withDefault<ReadonlyArray<string>>([])
  ),
  fineTunePollIntervalMs: wholeNumber("FINE_TUNE_POLL_INTERVAL_MS", 50, 3_600_000, 10_000),
  fineTuneSchedulerCron: Config.schema(CronExpression, "FINE_TUNE_SCHEDULER_CRON").pipe(Config.withDefault("* * * * *")),
  webhookPollIntervalMs: wholeNumber("WEBHOOK_POLL_INTERVAL_MS", 10, 600_000, 1_000),
  webhookRetryBaseMs: wholeNumber("WEBHOOK_RETRY_BASE_MS", 10, 3_600_000, 10_000),
  allowPrivateNetworkTargets: Config.Boolean("ALLOW_PRIVATE_NETWORK_TARGETS").pipe(Config.withDefault(false)),
  /** The bearer token `/metrics` asks for (never an API token of a tenant); unset and not public: `/metrics` is 404. */
  metricsToken: Config.option(Config.Redacted("METRICS_TOKEN")),
  /** `/metrics` without a token (a scraper on a private network). */
  metricsPublic: Config.Boolean("METRICS_PUBLIC").pipe(Config.withDefault(false)),
  /** Tokens and cost also by leaderboard (a label per leaderboard). */
  metricsPerLeaderboard: Config.Boolean("METRICS_PER_LEADERBOARD").pipe(Config.withDefault(false)),
  logLevel: Config.schema(CaseInsensitiveLogLevel, "LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  /** OpenTelemetry: where spans go over OTLP/HTTP (`/v1/traces` below it); unset, no span is built at all. */
  otelEndpoint: optionalUrl("OTEL_EXPORTER_OTLP_ENDPOINT"),
  /** `http/protobuf` (the OTLP default) or `http/json`. */
  otelProtocol: Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(Config.withDefault("http/protobuf" as const)),
  /** Headers sent with every export (`key=value,key2=value2`, values percent-encoded), e.g. a backend's credentials. */
  otelHeaders: Config.option(Config.Redacted("OTEL_EXPORTER_OTLP_HEADERS")),
  otelServiceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("podium")),
  /** Milliseconds between exports of the spans ended meanwhile. */
  otelExportIntervalMs: wholeNumber("OTEL_BSP_SCHEDULE_DELAY", 10, 600_000, 5_000),
  /** Whether GenAI spans carry the prompt and answer text (`gen_ai.input.messages`, `gen_ai.output.messages`). */
  otelCaptureContent: Config.Boolean("OTEL_CAPTURE_CONTENT").pipe(Config.withDefault(false))
})

export type PodiumConfig = typeof PodiumConfig extends Config.Config<infer A> ? A : never

/** The environment, with empty variables treated as unset. */
export const environmentProvider = (env: Record<string, string | undefined> = process.env) =>
  ConfigProvider.fromEnv({
    env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => !!entry[1]))
  })

export const loadConfig = (env?: Record<string, string | undefined>) =>
  PodiumConfig.parse(environmentProvider(env)).pipe(
    Effect.mapError((error) => new Error(`Invalid configuration: ${error.message}`)),
    Effect.filterOrFail(
      (config) => Option.isSome(config.oidcIssuer) === Option.isSome(config.oidcClientId),
      () => new Error("Invalid configuration: OIDC_ISSUER and OIDC_CLIENT_ID are set together, or neither")
    ),
    Effect.flatMap((config) => {
      // one way to verify sessions: an HS256 secret beside a JWKS would silently win over it
      const keys = Option.isSome(config.sessionJwksUrl) ? "SESSION_JWKS_URL" : Option.isSome(config.oidcIssuer) ? "OIDC_ISSUER" : undefined
      return Option.isSome(config.sessionJwtSecret) && keys !== undefined
        ? Effect.fail(new Error(
          `Invalid configuration: SESSION_JWT_SECRET and ${keys} cannot both be set: sessions are verified ` +
            `either with the HS256 secret or against ${keys === "OIDC_ISSUER" ? "the provider's JWKS" : "the JWKS"}; unset one`
        ))
        : Effect.succeed(config)
    })
  )

export const decodeSecretsKey = (key: Redacted.Redacted<string>): Redacted.Redacted<Uint8Array> => {
  const raw = Redacted.value(key)
  return Redacted.make(new Uint8Array(/^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64")))
}

export const publicBaseUrl = (config: PodiumConfig): string =>
  Option.getOrElse(config.publicBaseUrl, () => `http://${config.host}:${config.port}`).replace(/\/+$/, "")
