import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http"
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
}

/**
 * A Node HTTP server that holds requests arriving before the application's handler is attached
 * and hands them over once it is. Node drops `request` events that have no listener, and a
 * dropped request is never answered: without this, a client that connects in the moment between
 * `listen` and the handler being installed would wait forever (and hold up shutdown).
 *
 * With a `front` door, each request is offered to its route first (once one is set); what the
 * route declines goes on to the listeners as usual.
 */
export const createHoldingServer = (options: ServerOptions = {}, front?: FrontDoor): Server => {
  const server = createServer(options)
  if (front !== undefined) {
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
    server.emit = ((event: string | symbol, ...args: Array<unknown>) =>
      event === "request" && front.route?.handle(args[0] as IncomingMessage, args[1] as ServerResponse) === true
        ? true
        : emit(event, ...args)) as typeof server.emit
  }
  server.on("clientError", answerClientError)
  const held: Array<readonly [IncomingMessage, ServerResponse]> = []
  const hold = (request: IncomingMessage, response: ServerResponse) => {
    held.push([request, response])
  }
  const handOver = (event: string | symbol, listener: (...args: Array<any>) => void) => {
    if (event !== "request" || listener === hold) return
    server.off("newListener", handOver)
    server.off("request", hold)
    queueMicrotask(() => {
      for (const [request, response] of held.splice(0)) listener(request, response)
    })
  }
  server.on("request", hold)
  server.on("newListener", handOver)
  return server
}
