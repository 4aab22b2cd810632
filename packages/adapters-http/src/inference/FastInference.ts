import { Cause, Effect, Exit, Schema, SchemaIssue } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Authentication, Scope } from "@podium/domain/access"
import { Inference } from "@podium/domain/inference"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { ModelInference } from "@podium/domain/models"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { jsonBodyIssue, utf8Text } from "../RequestInput.ts"
import { type FrontRoute, InvalidInput, makeFrontDoor, paramsOf } from "../FrontDoor.ts"
import { ModelInferenceApi } from "../models/ModelServingApi.ts"
import { maxBodyBytes, notUtf8Body, requestIdOf, validationFailedBody } from "../RequestPipeline.ts"
import { InferenceApi, InferenceRequest } from "./InferenceApi.ts"

type Target =
  | { readonly kind: "leaderboard"; readonly id: LeaderboardId; readonly scope: Scope }
  | { readonly kind: "model"; readonly id: string; readonly versionId: string | null; readonly scope: Scope }

const segment = "([^/?]+)"
const end = "(?:\\?[\\x21-\\x7e]*)?$"
const leaderboardRoute = new RegExp(`^/v1/leaderboard/${segment}/(?:inference|chat/completions)${end}`)
const modelRoute = new RegExp(`^(?:/(?:v1|api)/models/${segment}/inference|/v1/models/${segment}/chat/completions)${end}`)
const versionRoute = new RegExp(`^/(?:v1|api)/models/${segment}/versions/${segment}/inference${end}`)

// each route's aliases share their endpoint's params
const leaderboardParams = paramsOf(InferenceApi.endpoints.infer)
const modelParams = paramsOf(ModelInferenceApi.endpoints.infer)
const versionParams = paramsOf(ModelInferenceApi.endpoints.inferVersion)

/**
 * The inference routes in their plain form: ids the contract's params schema takes, no
 * percent-encoding, printable ASCII. Anything else (a bad id, an encoded path, a trailing slash) goes
 * to the router, which answers it as it answers every route.
 */
const targetOf = (url: string): Target | undefined => {
  if (url.includes("%")) return undefined
  let m = leaderboardRoute.exec(url)
  if (m !== null) {
    const params = leaderboardParams({ leaderboard_id: m[1]! })
    return params === undefined ? undefined : { kind: "leaderboard", id: params.leaderboard_id, scope: "leaderboards:inference" }
  }
  m = modelRoute.exec(url)
  if (m !== null) {
    const id = (m[1] ?? m[2])!
    return modelParams({ model_id: id }) !== undefined ? { kind: "model", id, versionId: null, scope: "models:inference" } : undefined
  }
  m = versionRoute.exec(url)
  if (m !== null && versionParams({ model_id: m[1]!, version_id: m[2]! }) !== undefined) {
    return { kind: "model", id: m[1]!, versionId: m[2]!, scope: "models:inference" }
  }
  return undefined
}

/** Bodies the router would take as JSON and whose length it knows up front. */
const jsonContentType = /^application\/json\s*(?:;.*)?$/i

const decodePayload = Schema.decodeUnknownExit(Schema.Union([InferenceRequest]), { errors: "all" })

/**
 * Leaderboard and model inference without the HttpApi stack: the same checks in the same order
 * (request id; the pipeline's hostile-input check; the bearer credential and the scope; the
 * payload's schema), the same use cases and error mapping, the same answers and request log line.
 * The router keeps the same routes, and answers whatever this declines (see `targetOf`; bodies
 * without a declared length or over the limit; other content types); `test/fast-inference.test.ts`
 * holds both to the same answers.
 */
export const makeFastInference = Effect.gen(function*() {
  const context = yield* Effect.context<Authentication | Inference | ModelInference>()
  const leaderboards = yield* Inference
  const models = yield* ModelInference
  const run = Effect.runForkWith(context)
  const { failure, principalOf, send } = yield* makeFrontDoor

  const serve = (target: Target, request: IncomingMessage, text: string) =>
    Effect.gen(function*() {
      const principal = yield* principalOf(request, target.scope)
      let parsed: unknown
      if (text === "") parsed = undefined
      else {
        try {
          parsed = JSON.parse(text)
        } catch {
          return yield* Effect.fail(new InvalidInput("Payload", new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
        }
      }
      const payload = decodePayload(parsed)
      if (Exit.isFailure(payload)) {
        const error = Cause.squash(payload.cause)
        if (!Schema.isSchemaError(error)) return yield* Effect.die(error)
        return yield* Effect.fail(new InvalidInput("Payload", error.issue))
      }
      if (target.kind === "leaderboard") {
        const served = yield* mapDomainErrors(leaderboards.infer(principal, target.id, payload.value))
        return {
          body: served.body,
          headers: {
            "x-service-trace-id": served.traceId,
            "x-service-leaderboard-model-id": served.candidate.id,
            "x-service-model-source": served.candidate.platform
          } as Record<string, string>
        }
      }
      const served = yield* mapDomainErrors(models.infer(principal, target.id, target.versionId, payload.value))
      return {
        body: served.body,
        headers: {
          "x-service-model-id": served.model_id,
          "x-service-model-version-id": served.version_id,
          "x-service-model-message-id": served.message_id,
          ...(served.trace_id === null ? {} : { "x-service-trace-id": served.trace_id })
        } as Record<string, string>
      }
    })

  const respond = (request: IncomingMessage, response: ServerResponse, requestId: string, started: number, exit: Exit.Exit<
    { readonly body: string; readonly headers: Record<string, string> },
    unknown
  >) =>
    send(run, request, response, requestId, started, Exit.isSuccess(exit)
      ? { status: 200, body: exit.value.body, headers: exit.value.headers }
      : failure(run, requestId, exit.cause))

  const handle = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== "POST") return false
    const target = targetOf(request.url ?? "")
    if (target === undefined) return false
    const { headers } = request
    if (!jsonContentType.test(headers["content-type"] ?? "") || headers["transfer-encoding"] !== undefined) return false
    const length = Number(headers["content-length"])
    if (!Number.isSafeInteger(length) || length < 0 || length > maxBodyBytes) return false

    const started = performance.now()
    const incomingId = headers["x-request-id"]
    const requestId = requestIdOf(typeof incomingId === "string" ? incomingId : undefined)
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const text = utf8Text(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
      if (text === undefined) {
        return send(run, request, response, requestId, started, { status: 400, body: JSON.stringify(notUtf8Body) })
      }
      const hostile = jsonBodyIssue(text)
      if (hostile !== undefined) {
        return send(run, request, response, requestId, started, { status: 400, body: JSON.stringify(validationFailedBody([hostile])) })
      }
      const served = serve(target, request, text).pipe(Effect.annotateLogs("request_id", requestId))
      const fiber = run(Effect.withSpan(served, "http.server POST", {
        kind: "server",
        captureStackTrace: false,
        attributes: { "http.request.method": "POST", "url.path": (request.url ?? "").split("?")[0], "podium.front_door": true }
      }))
      fiber.addObserver((exit) => respond(request, response, requestId, started, exit))
      response.on("close", () => {
        if (!response.writableEnded) fiber.interruptUnsafe()
      })
    })
    return true
  }

  return { handle } satisfies FrontRoute
})
