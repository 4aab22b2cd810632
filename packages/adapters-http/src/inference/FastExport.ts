import { Effect, Exit, Schema, Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Authentication } from "@podium/domain/access"
import { type ExportQuery, TraceExport, TraceSource } from "@podium/domain/inference"
import { Uuid } from "../api/Schemas.ts"
import { type FrontRoute, makeFrontDoor, paramsOf } from "../FrontDoor.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { nosniff, requestIdOf } from "../RequestPipeline.ts"
import { TracesApi } from "./TracesApi.ts"

const route = /^\/v1\/leaderboard\/([^/?]+)\/traces(?:\?([\x21-\x7e]*))?$/
const exportParams = paramsOf(TracesApi.endpoints.export)
const isUuid = Schema.is(Uuid)

const contentTypes = { jsonl: "application/jsonl", ndjson: "application/x-ndjson" } as const

/** A whole number in [min, max] written plainly (no sign, exponent or leading zero). */
const count = (text: string, min: number, max: number): number | undefined => {
  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(text)) return undefined
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined
}

/** The sources a trace can have, as the domain lists them. */
const sources = new Set<string>(TraceSource.literals)

/**
 * A JSONL export page's query in its plain form: each known parameter once, valid as the contract
 * says, format `jsonl` or `ndjson` (or none). Anything else goes to the router, which answers it
 * (its 400s included) as it answers every route.
 */
const queryOf = (search: string | undefined) => {
  const query: { -readonly [K in keyof ExportQuery]: ExportQuery[K] } = { limit: 100, offset: 0, batchLimit: 25 }
  let format: keyof typeof contentTypes = "jsonl"
  const seen = new Set<string>()
  for (const [name, value] of new URLSearchParams(search ?? "")) {
    if (seen.has(name)) return undefined
    seen.add(name)
    if (name === "limit" || name === "offset" || name === "batch_limit") {
      const n = name === "limit" ? count(value, 1, 1000) : name === "batch_limit" ? count(value, 1, 100) : count(value, 0, Number.MAX_SAFE_INTEGER)
      if (n === undefined) return undefined
      if (name === "limit") query.limit = n
      else if (name === "batch_limit") query.batchLimit = n
      else query.offset = n
    } else if (name === "source" && sources.has(value)) query.source = value as ExportQuery["source"]
    else if (name === "run_id" && isUuid(value)) query.runId = value
    else if (name === "cursor" && isUuid(value)) query.cursor = value
    else if (name === "format" && (value === "jsonl" || value === "ndjson")) format = value
    else return undefined
  }
  return { query, format }
}

/**
 * Trace export as JSONL without the HttpApi stack, page after page the way a full export reads:
 * the same checks in the same order (request id; the bearer credential and `leaderboards:read`;
 * the leaderboard), the same use case, the same answer, headers and request log line. Requests in
 * another form (an id the contract refuses, the `json` format, an odd or invalid query, an encoded
 * path, a body) go to the router; `test/fast-export.test.ts` holds both to the same answers.
 */
export const makeFastExport = Effect.gen(function*() {
  const context = yield* Effect.context<Authentication | TraceExport>()
  const exporter = yield* TraceExport
  const run = Effect.runForkWith(context)
  const { failure, logRequest, principalOf, send } = yield* makeFrontDoor

  /** Writes a chunk, waiting for the socket to drain when its buffer is full. */
  const write = (response: ServerResponse) => (chunk: Uint8Array) =>
    response.write(chunk) ? Effect.void : Effect.callback<void>((resume) => {
      const drained = () => resume(Effect.void)
      response.once("drain", drained)
      return Effect.sync(() => response.off("drain", drained))
    })

  const handle = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== "GET") return false
    const url = request.url ?? ""
    if (url.includes("%")) return false
    const matched = route.exec(url)
    if (matched === null) return false
    const params = exportParams({ leaderboard_id: matched[1]! })
    if (params === undefined) return false
    const { headers } = request
    if (headers["transfer-encoding"] !== undefined || (headers["content-length"] ?? "0") !== "0") return false
    const parsed = queryOf(matched[2])
    if (parsed === undefined) return false

    const started = performance.now()
    const incomingId = headers["x-request-id"]
    const requestId = requestIdOf(typeof incomingId === "string" ? incomingId : undefined)
    const exported = Effect.scoped(Effect.gen(function*() {
      const principal = yield* principalOf(request, "leaderboards:read")
      const { chunks, nextCursor } = yield* mapDomainErrors(exporter.lines(principal, params.leaderboard_id, parsed.query))
      response.writeHead(200, {
        "content-type": contentTypes[parsed.format],
        ...(nextCursor === null ? {} : { "x-next-cursor": nextCursor }),
        ...nosniff,
        "x-request-id": requestId
      })
      yield* Stream.runForEach(chunks, write(response))
      response.end()
    })).pipe(Effect.annotateLogs("request_id", requestId))
    const fiber = run(Effect.withSpan(exported, "http.server GET", {
      kind: "server",
      captureStackTrace: false,
      attributes: { "http.request.method": "GET", "url.path": url.split("?")[0], "podium.front_door": true }
    }))
    fiber.addObserver((exit) => {
      if (Exit.isSuccess(exit)) return logRequest(run, request, requestId, started, 200)
      if (!response.headersSent) return send(run, request, response, requestId, started, failure(run, requestId, exit.cause))
      // the page broke off after its head: the client sees the connection end early
      response.destroy()
      failure(run, requestId, exit.cause)
      logRequest(run, request, requestId, started, 200)
    })
    response.on("close", () => {
      if (!response.writableEnded) fiber.interruptUnsafe()
    })
    return true
  }

  return { handle } satisfies FrontRoute
})
