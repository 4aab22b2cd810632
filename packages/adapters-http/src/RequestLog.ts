/**
 * The request log line, the one way both transports (the router's pipeline and the front door)
 * write it: one `request` line at Info per request, after its answer.
 */
import { Effect } from "effect"

/** The path alone: query strings stay out of logs. */
export const pathOf = (url: string) => new URL(url, "http://x").pathname

/** The line for a request answered with `status`, `started` (performance.now()) being when it came in. */
export const logRequest = (request: {
  readonly requestId: string
  readonly method: string
  readonly url: string
  readonly status: number
  readonly started: number
}): Effect.Effect<void> =>
  Effect.logInfo("request").pipe(Effect.annotateLogs({
    request_id: request.requestId,
    method: request.method,
    path: pathOf(request.url),
    status: request.status,
    duration_ms: Math.round((performance.now() - request.started) * 10) / 10
  }))
