/**
 * One endpoint core, two transports. An endpoint the front door also answers has one core: the
 * caller and the request its own schemas decoded in, its answer (body and headers) out. The router's
 * handler runs it (`handlerOf`) and so does the front door (FrontDoor.ts), so the answer, headers
 * included, is built in one place whichever transport carries it.
 */
import { Effect, type Scope, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import type { Principal } from "@podium/domain/access"
import { CurrentPrincipal } from "./api/Security.ts"

/**
 * A core's answer: 200 with this content type, body and headers. A streamed body is written as it
 * comes and pulled as the client reads it (a slow reader holds the source back); the core's scope
 * (`Core`) closes once it is written, or cut off.
 */
export interface Served {
  readonly contentType: string
  readonly body: string | Stream.Stream<Uint8Array>
  readonly headers: Readonly<Record<string, string>>
}

/**
 * An endpoint's core: the caller and the decoded request in, the answer out (or the contract's
 * errors). It runs in a scope that both transports close once the answer is written or the client
 * has gone: what a streamed answer holds (an upstream call) is released there.
 */
export type Core<Request, E> = (principal: Principal, request: Request) => Effect.Effect<Served, E, Scope.Scope>

/** The headers of a server-sent event stream. */
export const eventStreamType = "text/event-stream; charset=utf-8"
export const eventStreamHeaders = { "cache-control": "no-cache" } as const

const encoder = new TextEncoder()

/**
 * `events` with a failure turned into its last event, as OpenAI's API streams an error: `data:`
 * and the error's contract body (`{"error": {code, message, details}}`, which OpenAI clients raise
 * as an API error), then the stream ends. `toApi` is the failure's contract error, as the
 * endpoint's error answer would carry it.
 */
export const errorAsLastEvent = <E, A extends { readonly error: unknown }>(
  events: Stream.Stream<Uint8Array, E>,
  toApi: (error: E) => Effect.Effect<never, A>
): Stream.Stream<Uint8Array> =>
  Stream.catch(events, (error) =>
    Stream.fromEffect(Effect.map(Effect.flip(toApi(error)), (api) =>
      encoder.encode(`data: ${JSON.stringify({ error: api.error })}\n\n`))))

/** An empty first chunk: Node then sends a streamed response's head at once, not with its first bytes. */
const headNow = Stream.succeed(new Uint8Array(0))

/** `served` as the router's response (a stream's head sent at once, as the front door sends it). */
export const responseOf = ({ body, contentType, headers }: Served): HttpServerResponse.HttpServerResponse =>
  typeof body === "string"
    ? HttpServerResponse.text(body, { contentType, headers })
    : HttpServerResponse.stream(Stream.concat(headNow, body), { contentType, headers })

/**
 * The router's handler for `core`: run as the caller the route's authentication middleware
 * established, in the request's scope (which the router closes once the response is written).
 */
export const handlerOf = <Request, E>(core: Core<Request, E>) => (request: Request) =>
  Effect.flatMap(Effect.service(CurrentPrincipal), (principal) => Effect.map(core(principal, request), responseOf))
