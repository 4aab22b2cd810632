/*
 * The Node HTTP server Podium listens with: it answers what Node rejects itself with the contract's
 * error body, holds requests that arrive before the application is ready, and has a front door.
 *
 * Why a front door: the hottest routes (leaderboard and model inference, FastInference) are
 * answered from Node's `request` event, skipping the HttpApi router's per-request work but keeping
 * its contract: each front route is built from its endpoint's own definition and runs the same core,
 * credential check, error answer and log line as the router (adapters-http's FrontDoor.ts), and
 * test/front-door-differential.test.ts holds both transports to the same answers. BENCHMARKS.md,
 * `npm run bench -- inference` at 100 connections: 974–991 req/s through the router, 1,183–1,509
 * through the front door (loop µs per request 1,002–1,019 → 659–850). A JSONL export page had a front
 * route too; an alternating run (six pairs) showed no gain beyond the noise, so the router answers it.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse
} from "node:http"
import type { Duplex } from "node:stream"

/**
 * What Node answers itself, before any request reaches the application (headers too large, a
 * request that timed out, bytes that are not HTTP), with the contract's JSON error body instead of
 * Node's empty one. The connection is then closed for good once the answer is out: ending only our
 * side would leave the socket open for as long as a client that never reads or closes keeps its own.
 */
const answerClientError = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (!socket.writable || (error.code === "ECONNRESET")) return socket.destroy()
  const [status, reason, code, message] = error.code === "HPE_HEADER_OVERFLOW"
    ? [431, "Request Header Fields Too Large", "headers_too_large", "The request headers are too large"] as const
    : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? [408, "Request Timeout", "request_timeout", "The request took too long to arrive"] as const
    : [400, "Bad Request", "bad_request", "The request is not valid HTTP"] as const
  const body = JSON.stringify({ error: { code, message } })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy()
  )
}

/**
 * Node's connection timeouts. A connection must send a request's headers within `headersTimeoutMs`
 * of opening (or of the request's start), else it is answered 408 and closed: a socket that sends
 * nothing is not held for good. Node looks for such connections every 30 s by default, so here more
 * often (at most a second apart). An idle keep-alive connection is closed after `keepAliveTimeoutMs`
 * (plus Node's one-second grace). A request whose headers came in time may take its body as long as
 * Node's `requestTimeout` allows (300 s).
 */
export const connectionTimeouts = (
  { headersTimeoutMs, keepAliveTimeoutMs }: { readonly headersTimeoutMs: number; readonly keepAliveTimeoutMs: number }
): ServerOptions => ({
  headersTimeout: headersTimeoutMs,
  connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersTimeoutMs / 4)),
  keepAliveTimeout: keepAliveTimeoutMs
})

/** Where the application puts a route that answers before the router (see `createHoldingServer`). */
export interface FrontDoor {
  route: { readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean } | undefined
  /** `/readyz` (Readyz.ts): offered every request first, answered while the application starts and drains too. */
  probe?: { readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean } | undefined
}

/**
 * A Node HTTP server whose only `request` listener is its own: it offers each request to the
 * `front` door's route (once one is set), then hands what the route declines to the application's
 * handler. Requests arriving before that handler exists are held and handed over once it does:
 * Node drops `request` events that have no listener, and a dropped request is never answered, so
 * a client that connects in the moment between `listen` and the handler being installed would
 * otherwise wait forever (and hold up shutdown).
 *
 * The application attaches its handler the usual way (`server.on("request", handler)`, which is
 * what @effect/platform-node's `NodeHttpServer` does in `serve`; it has no option to hand the
 * handler over instead). The server adopts the first such handler and takes it off the emitter
 * again in the same turn (a microtask, so before any further request can be parsed): Node must not
 * call it beside ours, or a request the front door answered would be answered twice. (The
 * platform's `off` at shutdown then has nothing to take off: the handler stays reachable through
 * ours until the server is closed. A request with `Expect: 100-continue` goes to the platform's own
 * `checkContinue` listener, so to the router, as it always did.)
 */
export const createHoldingServer = (options: ServerOptions = {}, front?: FrontDoor): Server => {
  let application: RequestListener | undefined
  const held: Array<readonly [IncomingMessage, ServerResponse]> = []
  const server = createServer(options, (request, response) => {
    if (front?.probe?.handle(request, response) === true) return
    if (front?.route?.handle(request, response) === true) return
    if (application === undefined) held.push([request, response])
    else application(request, response)
  })
  const adopt = (event: string | symbol, listener: RequestListener) => {
    if (event !== "request") return
    server.off("newListener", adopt)
    application = listener
    queueMicrotask(() => {
      server.off("request", listener)
      for (const [request, response] of held.splice(0)) listener(request, response)
    })
  }
  server.on("newListener", adopt)
  server.on("clientError", answerClientError)
  return server
}
