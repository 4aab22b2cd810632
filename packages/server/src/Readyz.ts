/*
 * `GET /readyz`: whether this instance should be sent traffic, for a load balancer. 200 while it
 * takes traffic; 503 with the contract's error body while it starts (the routes or the jobs are
 * still being built), once its drain has begun (SIGTERM or SIGINT), or while its database does not
 * answer. `/healthz` (the HttpApi's health group) says whether the process is up and reaches its
 * database; `/readyz` adds the instance's own lifecycle.
 *
 * It is answered from the Node server's `request` event, before the front door and the router
 * (HoldingServer.ts): it must answer while the router is not installed yet and while the server
 * drains, and a probe every second is no tenant's request (no credential, no rate limit, no
 * request log line). It is therefore not in the HttpApi contract nor in the OpenAPI document.
 *
 * The database check is `Readiness.database` (`SELECT 1`) with a one-second limit, run only for
 * `/readyz` and at most once a second however many probes ask: concurrent probes share the check
 * in flight, and its answer is kept for a second.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** Why the instance does not take traffic. */
export type NotReady = "starting" | "draining" | "database_unavailable"

/** What `/readyz` reads; the application sets it as it starts and stops. */
export interface ReadyState {
  /** Every route and every job is built. */
  started: boolean
  /** The drain has begun (it never ends: the process stops after it). */
  draining: boolean
  /** Whether the database answers, within a bounded time (set once the services are built). */
  database: (() => Promise<boolean>) | undefined
}

export const readyzPath = "/readyz"

const messages: Record<NotReady, string> = {
  starting: "The instance is starting",
  draining: "The instance is shutting down and takes no new requests",
  database_unavailable: "The database does not answer"
}

/** A probe for the Node server: answers `GET` and `HEAD /readyz`, declines everything else. */
export const makeReadyz = (state: ReadyState, options: { readonly cacheMs?: number; readonly now?: () => number } = {}) => {
  const cacheMs = options.cacheMs ?? 1_000
  const now = options.now ?? Date.now
  let last: { readonly at: number; readonly up: boolean } | undefined
  let inFlight: Promise<boolean> | undefined

  const database = (): Promise<boolean> => {
    if (last !== undefined && now() - last.at < cacheMs) return Promise.resolve(last.up)
    if (inFlight !== undefined) return inFlight
    const check = state.database
    if (check === undefined) return Promise.resolve(false)
    const started = now()
    inFlight = check().catch(() => false).then((up) => {
      last = { at: started, up }
      inFlight = undefined
      return up
    })
    return inFlight
  }

  const status = async (): Promise<NotReady | "ready"> => {
    if (state.draining) return "draining"
    if (!state.started) return "starting"
    const up = await database()
    // the drain may have begun while the database was asked
    if (state.draining) return "draining"
    return up ? "ready" : "database_unavailable"
  }

  const answer = (request: IncomingMessage, response: ServerResponse, status: NotReady | "ready") => {
    if (response.destroyed || response.headersSent) return
    const body = status === "ready"
      ? JSON.stringify({ ok: true, status })
      : JSON.stringify({ ok: false, status, error: { code: "not_ready", message: messages[status] } })
    response.writeHead(status === "ready" ? 200 : 503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // a load balancer's kept-alive connection is not kept into the drain
      ...(status === "draining" ? { connection: "close" } : {})
    })
    response.end(request.method === "HEAD" ? undefined : body)
  }

  return {
    handle: (request: IncomingMessage, response: ServerResponse): boolean => {
      const url = request.url ?? ""
      if (url !== readyzPath && !url.startsWith(`${readyzPath}?`)) return false
      if (request.method !== "GET" && request.method !== "HEAD") return false
      // the request has no body to wait for: answer as soon as the status is known
      void status().then((s) => answer(request, response, s), () => answer(request, response, "database_unavailable"))
      return true
    }
  }
}
