import { DateTime, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { PushToken } from "@podium/domain/access"
import { DatasetLabels, Datasets, labelJobView } from "@podium/domain/datasets"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const iso = (at: DateTime.Utc | null) => at === null ? null : DateTime.formatIso(at)

const tokenView = (token: PushToken) => ({
  id: token.id,
  name: token.name,
  display_prefix: token.display_prefix,
  created_at: DateTime.formatIso(token.created_at),
  last_used_at: iso(token.last_used_at),
  revoked_at: iso(token.revoked_at)
})

/** The body's size in bytes: its Content-Length, else (chunked) the length of the text read. */
const bodyBytes = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = Number(request.headers["content-length"])
  return Number.isFinite(declared)
    ? Effect.succeed(declared)
    : Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => Buffer.byteLength(text))
}

const pushDatasets = HttpApiBuilder.group(
  Api,
  "pushDatasets",
  Effect.fn(function*(handlers) {
    const datasets = yield* Datasets
    const labels = yield* DatasetLabels
    return handlers
      .handle("push", ({ params, payload, request }) =>
        Effect.gen(function*() {
          return yield* datasets.push(yield* CurrentPrincipal, params.leaderboard_id, payload, yield* bodyBytes(request))
        }).pipe(mapDomainErrors))
      .handle("status", ({ params }) =>
        Effect.gen(function*() {
          // the job first: a job's end commits with its version, so a finished job read before the versions
          // always finds its version among them (read after, it could name one they do not hold yet)
          const job = yield* labels.latest(params.leaderboard_id)
          const status = yield* datasets.status(yield* CurrentPrincipal, params.leaderboard_id)
          return { ...status, labelling: job._tag === "Some" ? labelJobView(job.value) : null }
        }).pipe(mapDomainErrors))
      .handle("download", ({ params, query }) =>
        Effect.gen(function*() {
          const { body, version } = yield* datasets.download(yield* CurrentPrincipal, params.leaderboard_id, query.version)
          return HttpServerResponse.stream(body, {
            contentType: "application/jsonl",
            headers: {
              "x-service-dataset-version": String(version.version),
              ...(version.sha256 === null ? {} : { "x-service-dataset-sha256": version.sha256 })
            }
          })
        }).pipe(mapDomainErrors))
  })
)

const datasetAdmin = HttpApiBuilder.group(
  Api,
  "datasetAdmin",
  Effect.fn(function*(handlers) {
    const datasets = yield* Datasets
    const labels = yield* DatasetLabels
    return handlers
      .handle("issueToken", ({ params, payload }) =>
        Effect.gen(function*() {
          const { issued, push_url, tokens } = yield* datasets.issueToken(yield* CurrentPrincipal, params.leaderboard_id, payload ?? {})
          return {
            ...(issued === null ? {} : { token: tokenView(issued.token), secret: Redacted.value(issued.secret) }),
            tokens: tokens.map(tokenView),
            push_url,
            header: "X-Service-Push-Token" as const
          }
        }).pipe(mapDomainErrors))
      .handle("revokeTokens", ({ params }) =>
        Effect.gen(function*() {
          return { revoked: yield* datasets.revokeTokens(yield* CurrentPrincipal, params.leaderboard_id) }
        }).pipe(mapDomainErrors))
      .handle("revokeToken", ({ params }) =>
        Effect.gen(function*() {
          yield* datasets.revokeToken(yield* CurrentPrincipal, params.leaderboard_id, params.token_id)
        }).pipe(mapDomainErrors))
      .handle("consolidate", ({ params }) =>
        Effect.gen(function*() {
          return yield* datasets.consolidate(yield* CurrentPrincipal, params.leaderboard_id)
        }).pipe(mapDomainErrors))
      .handle("autoLabels", ({ params }) =>
        Effect.gen(function*() {
          return { job: labelJobView(yield* labels.start(yield* CurrentPrincipal, params.leaderboard_id)) }
        }).pipe(mapDomainErrors))
  })
)

export const PushDatasetsHttp = Layer.mergeAll(pushDatasets, datasetAdmin)
