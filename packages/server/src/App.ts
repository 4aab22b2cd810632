import { NodeCrypto, NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer, References, Tracer } from "effect"
import { ClusterWorkflowEngine, SingleRunner } from "effect/cluster"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import { Api } from "@podium/adapters-http/api/Api"
import { ApiHttp, openApiPath } from "@podium/adapters-http/ApiHttp"
import { ServedOverHttps } from "@podium/adapters-http/access/WebSessionCookie"
import { FailedAuthentications } from "@podium/adapters-http/auth/FailedAuthentications"
import { makeFastInference } from "@podium/adapters-http/inference/FastInference"
import { RequestMetricsMiddleware } from "@podium/adapters-http/RequestMetrics"
import { RequestPipeline } from "@podium/adapters-http/RequestPipeline"
import { TokenSecretsNode } from "@podium/adapters-node/access/TokenSecretsNode"
import { DocumentReaderNode } from "@podium/adapters-node/human/DocumentReaderNode"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { SecretCipherAesGcm } from "@podium/adapters-node/SecretCipherAesGcm"
import { AccessPg } from "@podium/adapters-pg/access/AccessPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { DatasetsPg } from "@podium/adapters-pg/datasets/DatasetsPg"
import { HumanPg } from "@podium/adapters-pg/human/HumanPg"
import { InferencePg } from "@podium/adapters-pg/inference/InferencePg"
import { TraceStatsPg } from "@podium/adapters-pg/inference/TraceStatsPg"
import { InferenceLogStatsPg } from "@podium/adapters-pg/models/InferenceLogStatsPg"
import { IntegrationsPg } from "@podium/adapters-pg/integrations/IntegrationsPg"
import { LeaderboardsPg } from "@podium/adapters-pg/leaderboards/LeaderboardsPg"
import { ModelsPg } from "@podium/adapters-pg/models/ModelsPg"
import { ReadinessPg } from "@podium/adapters-pg/ReadinessPg"
import { RunsPg } from "@podium/adapters-pg/runs/RunsPg"
import { SafeHttp } from "@podium/adapters-providers/SafeHttpClient"
import { AccessUseCases } from "@podium/domain/access"
import { DatasetsUseCases } from "@podium/domain/datasets"
import { HumanUseCases } from "@podium/domain/human"
import { CallBudgets, CandidateCalls, ChatTargets, InferenceUseCases, LeaderboardStats, MetricsPerLeaderboard } from "@podium/domain/inference"
import { IntegrationsUseCases } from "@podium/domain/integrations"
import { LeaderboardsUseCases } from "@podium/domain/leaderboards"
import { ModelDirectoryModels, ModelStats, ModelsUseCases, ServiceModelsDeployed } from "@podium/domain/models"
import { RunsUseCases } from "@podium/domain/runs"
import { Readiness } from "@podium/domain/shared"
import { layerCaseGeneration, layerCaseGenerationWorkflow } from "./CaseGeneration.ts"
import { type PodiumConfig, publicBaseUrl } from "./Config.ts"
import { layerDatabase } from "./Database.ts"
import { layerDatasetLabelQueue, layerDatasetLabelsWorkflow } from "./DatasetLabelling.ts"
import { layerDeploymentQueue, layerDeploymentWorkflow, layerFineTuneQueue, layerFineTuneWorkflow } from "./FineTuneExecution.ts"
import { connectionTimeouts, createHoldingServer, type FrontDoor } from "./HoldingServer.ts"
import { layerInviteMailWorkflow, layerInviteMailQueue } from "./InviteMail.ts"
import { layerJobs, layerWebhookDeliveries } from "./Jobs.ts"
import { layerMetricRegistry, layerMetricsRoute, metricsPath } from "./Metrics.ts"
import { resolveSecrets } from "./LocalState.ts"
import { layerSessions } from "./Oidc.ts"
import { layerProviders } from "./Providers.ts"
import { makeReadyz, type ReadyState } from "./Readyz.ts"
import { layerImprovementQueue, layerImprovementWorkflow, layerRunQueue, layerRunWorkflow } from "./RunExecution.ts"
import { layerLinks, layerSettings } from "./Settings.ts"
import { layerTracer, withGenAiSpans } from "./Telemetry.ts"
import { layerWebApp, webAppPaths } from "./WebApp.ts"

/**
 * Durable background work (schedules and workflows): one runner per process, shards leased through
 * Postgres advisory locks, so several instances share the work and a survivor takes over.
 */
export const layerCluster = SingleRunner.layer({
  shardingConfig: { entityMessagePollInterval: "1 second" },
  runnerStorage: "sql"
}).pipe(Layer.provide(NodeCrypto.layerDigest), Layer.orDie)

/** Adapters and use cases; everything but the HTTP server itself. */
export const layerServices = (config: PodiumConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    const secrets = yield* resolveSecrets(config)
    const repositories = Layer.mergeAll(
      AccessPg.layer,
      IntegrationsPg.layer,
      LeaderboardsPg.layer,
      HumanPg.layer,
      InferencePg.layer,
      DatasetsPg.layer,
      RunsPg.layer,
      ModelsPg.layer,
      ReadinessPg.layer,
      TraceStatsPg.layer,
      InferenceLogStatsPg.layer
    ).pipe(Layer.provide(ChangeFeed.layer), Layer.provide(IdGeneratorUuidV7.layer))
    const adapters = Layer.mergeAll(
      repositories,
      IdGeneratorUuidV7.layer,
      SecretCipherAesGcm.layer(secrets.secretsKey),
      TokenSecretsNode,
      FailedAuthentications.layer({ perMinute: config.authFailuresPerMinute }),
      DocumentReaderNode.layer(),
      layerSessions(config, secrets.sessionSecret),
      withGenAiSpans(config)(layerProviders(config)),
      layerSettings(config),
      layerLinks(config),
      Layer.succeed(ServedOverHttps, publicBaseUrl(config).startsWith("https:")),
      Layer.succeed(MetricsPerLeaderboard, config.metricsPerLeaderboard)
    ).pipe(Layer.provideMerge(SafeHttp.layer({ allowPrivateNetwork: config.allowPrivateNetworkTargets })))
    // each context's use cases; beneath them what several contexts build on: the models context
    // answering inference's Service candidates and the leaderboards' ModelDirectory, the leaderboards,
    // and inference's targets and budgets
    const useCases = Layer.mergeAll(
      AccessUseCases.layer,
      IntegrationsUseCases.layer,
      InferenceUseCases.layer,
      HumanUseCases.layer,
      DatasetsUseCases.layer,
      RunsUseCases.layer,
      ModelsUseCases.layer
    ).pipe(
      Layer.provide(CandidateCalls.layer),
      Layer.provide(ServiceModelsDeployed.layer),
      Layer.provideMerge(LeaderboardsUseCases.layer.pipe(Layer.provide(ModelDirectoryModels.layer))),
      Layer.provideMerge(ChatTargets.layer),
      Layer.provideMerge(CallBudgets.layer)
    )
    // dashboards read what the leaderboards and models contexts decide a caller may see
    const dashboards = Layer.mergeAll(LeaderboardStats.layer, ModelStats.layer)
    return dashboards.pipe(Layer.provideMerge(useCases), Layer.provideMerge(adapters))
  }))

export const docsPaths = [openApiPath, "/docs", metricsPath, ...webAppPaths]

/**
 * The HTTP routes: the API, its OpenAPI document, the Scalar reference and the web app. The request
 * metrics' middleware is built first so that it wraps the request pipeline (it counts final statuses).
 */
export const layerRoutes = Layer.mergeAll(
  ApiHttp,
  HttpApiScalar.layer(Api, { path: "/docs" }),
  layerWebApp,
  RequestPipeline(Api, docsPaths)
).pipe(Layer.provide(RequestMetricsMiddleware(Api, docsPaths)))

/** Where the service listens; `fastInference: false` leaves the inference routes to the router too (tests compare both). */
export interface Listen {
  readonly port: number
  readonly host: string
  readonly fastInference?: boolean | undefined
  /** True once the process was told to stop (SIGTERM, SIGINT): `/readyz` answers 503 from then on. */
  readonly draining?: (() => boolean) | undefined
}

/**
 * The whole service, listening where `listen` says. The listener and the jobs are built only once
 * the database is migrated and every service is ready, so no connection is accepted before it can
 * be answered. Leaderboard and model inference (FastInference) are answered at the server's front
 * door before the router, with the same contract (why: see HoldingServer.ts).
 */
export const makeApp = (config: PodiumConfig, listen: Listen) => {
  const platform = ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(layerCluster),
    Layer.provideMerge(layerDatabase(config))
  )
  const services = layerServices(config).pipe(
    Layer.provideMerge(Layer.mergeAll(layerInviteMailQueue, layerCaseGeneration, layerDatasetLabelQueue, layerRunQueue,
      layerImprovementQueue, layerFineTuneQueue, layerDeploymentQueue)),
    Layer.provideMerge(platform)
  )
  const jobs = Layer.mergeAll(layerJobs(config), layerWebhookDeliveries(config), layerInviteMailWorkflow, layerCaseGenerationWorkflow, layerDatasetLabelsWorkflow,
    layerRunWorkflow, layerImprovementWorkflow, layerFineTuneWorkflow, layerDeploymentWorkflow)
  const ready: ReadyState = { started: false, draining: false, database: undefined }
  const probe = makeReadyz(ready)
  const front: FrontDoor = {
    route: undefined,
    probe: {
      handle: (request, response) => {
        if (listen.draining?.() === true) ready.draining = true
        return probe.handle(request, response)
      }
    }
  }
  const timeouts = connectionTimeouts({ headersTimeoutMs: config.httpHeadersTimeoutMs, keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs })
  let node: ReturnType<typeof createHoldingServer> | undefined
  // the platform closes the listener first, then lets requests in flight finish for the grace period
  // (the router's are then interrupted); `readiness` below cuts what is still open after it
  const grace = Duration.seconds(config.shutdownGraceSeconds)
  const server = NodeHttpServer.layer(() => node = createHoldingServer(timeouts, front), {
    port: listen.port,
    host: listen.host,
    gracefulShutdownTimeout: grace
  })
  // `/readyz` asks the database through Readiness; at shutdown (before the listener closes) it says
  // 503, and connections still open a grace period later (a front-door stream) are cut
  const readiness = Layer.effectDiscard(Effect.gen(function*() {
    const { database } = yield* Readiness
    const context = yield* Effect.context<never>()
    ready.database = () =>
      Effect.runPromiseWith(context)(Effect.timeoutOrElse(database, { duration: "1 second", orElse: () => Effect.succeed(false) }))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        ready.draining = true
        setTimeout(() => node?.closeAllConnections(), Duration.toMillis(grace)).unref()
      })
    )
  }))
  const frontRoutes = listen.fastInference === false ? Layer.empty : Layer.effectDiscard(Effect.gen(function*() {
    front.route = yield* makeFastInference
    yield* Effect.addFinalizer(() => Effect.sync(() => front.route = undefined))
  }))
  const http = HttpRouter.serve(Layer.merge(layerRoutes, layerMetricsRoute(config)), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.merge(frontRoutes),
    Layer.merge(readiness),
    Layer.tap(() =>
      Effect.gen(function*() {
        const { address } = yield* HttpServer.HttpServer
        yield* Effect.logInfo("podium listening").pipe(Effect.annotateLogs({ url: HttpServer.formatAddress(address) }))
      })
    ),
    Layer.provideMerge(server)
  )
  return Layer.mergeAll(http, jobs).pipe(
    Layer.tap(() => Effect.sync(() => ready.started = true)),
    Layer.provide(services),
    Layer.provide(layerSpans),
    Layer.provide(layerTracer(config)),
    Layer.provide(layerMetricRegistry)
  )
}

/**
 * Spans are recorded only for a tracer someone installed (tests and benchmarks count calls with
 * one). Without, Effect's native tracer would build every span for nobody — it has no backend,
 * as Effect's HTTP server also assumes — so span registration is turned off.
 */
export const layerSpans = Layer.unwrap(Effect.map(Effect.service(Tracer.Tracer), (tracer) =>
  tracer === Tracer.nativeTracer ? Layer.succeed(References.TracerEnabled, false) : Layer.empty))

export const layerApp = (config: PodiumConfig, draining?: () => boolean) =>
  makeApp(config, { port: config.port, host: config.host, draining })
