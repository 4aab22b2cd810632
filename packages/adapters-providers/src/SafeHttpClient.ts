import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer } from "effect"
import type { HttpClient } from "effect/http"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import {
  Agent,
  buildConnector,
  type Dispatcher,
  fetch as undiciFetch,
  interceptors,
  type RequestInit as UndiciRequestInit,
  type Response as UndiciResponse
} from "undici"
import { isBlockedAddress } from "./AddressPolicy.ts"

export type Resolver = (
  hostname: string
) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>

export interface SafeHttpOptions {
  /** Turns the address guard off: for tests and local development only. */
  readonly allowPrivateNetwork: boolean
  /** Resolves host names; defaults to the system resolver (`dns.lookup` with `all: true`). */
  readonly resolve?: Resolver | undefined
  /** Bounds name resolution plus the TCP/TLS handshake. Default 5 s. */
  readonly connectTimeoutMs?: number | undefined
  /** Bounds one whole exchange: headers, body and redirects. Default 15 s. */
  readonly requestTimeoutMs?: number | undefined
  /** Default 10 MiB; for fetch it also bounds the decompressed body. */
  readonly maxResponseBytes?: number | undefined
  /** Default 5; 0 hands redirects back to the caller unfollowed. */
  readonly maxRedirects?: number | undefined
  /** Replaces `isBlockedAddress`, so a test can treat one loopback address as public. */
  readonly isBlocked?: ((address: string) => boolean) | undefined
}

/** undici's redirect interceptor reads this per request, though its types leave it out. */
type RedirectOptions = Dispatcher.DispatchOptions & { readonly maxRedirections?: number | undefined }

/**
 * Request options of the safe dispatcher: `deadlineMs` replaces the client's `requestTimeoutMs`
 * for one exchange (a model completion may take far longer than a metadata call), and
 * `maxResponseBytes` its body limit (a dataset file may be larger than any API answer).
 */
export type SafeRequestOptions = Dispatcher.RequestOptions & {
  readonly deadlineMs?: number | undefined
  readonly maxResponseBytes?: number | undefined
  readonly maxRedirections?: number | undefined
}

/** Typed with the global fetch types, which is what jose's `customFetch` and most callers expect. */
export type SafeFetch = (input: string | URL, init?: RequestInit) => Promise<Response>

/** Why the client refused or cut short a request. */
export class SafeHttpError extends Error {
  override readonly name = "SafeHttpError"
  readonly reason: "BlockedAddress" | "ResponseTooLarge" | "Timeout"
  constructor(reason: SafeHttpError["reason"], message: string) {
    super(message)
    this.reason = reason
  }
}

const defaults = {
  connectTimeoutMs: 5_000,
  requestTimeoutMs: 15_000,
  maxResponseBytes: 10 * 1024 * 1024,
  maxRedirects: 5
}

const settingsOf = (options: SafeHttpOptions) => ({
  connectTimeoutMs: options.connectTimeoutMs ?? defaults.connectTimeoutMs,
  requestTimeoutMs: options.requestTimeoutMs ?? defaults.requestTimeoutMs,
  maxResponseBytes: options.maxResponseBytes ?? defaults.maxResponseBytes,
  maxRedirects: options.maxRedirects ?? defaults.maxRedirects
})

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true })

const tooLarge = (maxBytes: number) =>
  new SafeHttpError("ResponseTooLarge", `The response body exceeds the limit of ${maxBytes} bytes`)

const withTimeout = <A>(promise: Promise<A>, ms: number, message: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SafeHttpError("Timeout", message)), ms).unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Resolves the host itself, refuses if any answer is blocked, and connects to the address it
 * checked, so neither an IP-literal URL nor a second DNS answer (rebinding) can slip past. TLS
 * still verifies and sends SNI for the original host name.
 */
const guardedConnector = (options: SafeHttpOptions): buildConnector.connector => {
  const { connectTimeoutMs } = settingsOf(options)
  const connect = buildConnector({ timeout: connectTimeoutMs })
  const resolve = options.resolve ?? systemResolver
  const isBlocked = options.allowPrivateNetwork ? () => false : options.isBlocked ?? isBlockedAddress

  const checkedAddress = async (hostname: string) => {
    const addresses = isIP(hostname) !== 0 ? [hostname] : (await resolve(hostname)).map((_) => _.address)
    const blocked = addresses.find(isBlocked)
    if (blocked !== undefined) {
      throw new SafeHttpError(
        "BlockedAddress",
        `Refusing to connect to ${hostname}: ${blocked} is not a public address ` +
          "(set ALLOW_PRIVATE_NETWORK_TARGETS=true to call servers on this machine or a private network)"
      )
    }
    if (addresses[0] === undefined) throw new Error(`${hostname} did not resolve to any address`)
    return addresses[0]
  }

  return (target, callback) => {
    const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1")
    const servername = target.protocol === "https:" && isIP(hostname) === 0
      ? target.servername || hostname
      : target.servername
    withTimeout(checkedAddress(hostname), connectTimeoutMs, `Resolving ${hostname} timed out`).then(
      (address) => connect({ ...target, hostname: address, servername }, callback),
      (error: Error) => callback(error, null)
    )
  }
}

/** Enforces the size limit and one deadline over a whole exchange, including redirect hops. */
class LimitedHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler
  readonly #maxBytes: number
  readonly #timer: NodeJS.Timeout
  #controller: Dispatcher.DispatchController | undefined
  #timedOut: SafeHttpError | undefined
  #received = 0

  constructor(handler: Dispatcher.DispatchHandler, maxBytes: number, timeoutMs: number) {
    this.#handler = handler
    this.#maxBytes = maxBytes
    this.#timer = setTimeout(() => {
      this.#timedOut = new SafeHttpError("Timeout", `The request did not complete within ${timeoutMs} ms`)
      this.#controller?.abort(this.#timedOut)
    }, timeoutMs).unref()
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown) {
    this.#controller = controller
    this.#handler.onRequestStart?.(controller, context)
    if (this.#timedOut !== undefined) controller.abort(this.#timedOut)
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler["onRequestUpgrade"]>>) {
    clearTimeout(this.#timer)
    this.#handler.onRequestUpgrade?.(...args)
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | Array<string> | undefined>,
    statusMessage?: string
  ) {
    if (Number(headers["content-length"]) > this.#maxBytes) throw tooLarge(this.#maxBytes)
    this.#handler.onResponseStart?.(controller, statusCode, headers, statusMessage)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.#received += chunk.length
    if (this.#received > this.#maxBytes) throw tooLarge(this.#maxBytes)
    this.#handler.onResponseData?.(controller, chunk)
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | Array<string> | undefined>) {
    clearTimeout(this.#timer)
    this.#handler.onResponseEnd?.(controller, trailers)
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error) {
    clearTimeout(this.#timer)
    this.#handler.onResponseError?.(controller, error)
  }

  onResponseStarted() {
    this.#handler.onResponseStarted?.()
  }

  onBodySent(chunk: Buffer) {
    this.#handler.onBodySent?.(chunk)
  }

  onRequestSent() {
    this.#handler.onRequestSent?.()
  }
}

/**
 * An undici dispatcher for user-given URLs: pooled keep-alive connections, only to public
 * addresses (unless `allowPrivateNetwork`), with timeouts, a response size limit, and redirects
 * followed hop by hop through the same guarded connector. Callers that pass no redirect limit
 * (Effect's HttpClient) get `maxRedirects`; undici's fetch asks for none and follows on its own,
 * still through this dispatcher, so `safeFetch` is the way to get the limit with fetch.
 */
export const makeSafeDispatcher = (options: SafeHttpOptions): Dispatcher => {
  const { requestTimeoutMs, maxResponseBytes, maxRedirects } = settingsOf(options)
  const agent = new Agent({
    connect: guardedConnector(options),
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000
  })
  const limits: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts: RedirectOptions, handler) => {
    const deadline = (opts as { readonly deadlineMs?: number }).deadlineMs ?? requestTimeoutMs
    const limited: RedirectOptions = {
      ...opts,
      // callers such as Effect's undici client set their own, longer timeouts
      headersTimeout: deadline,
      bodyTimeout: deadline,
      maxRedirections: Math.min(opts.maxRedirections ?? maxRedirects, maxRedirects)
    }
    const maxBytes = opts.method === "HEAD"
      ? Number.POSITIVE_INFINITY
      : (opts as { readonly maxResponseBytes?: number }).maxResponseBytes ?? maxResponseBytes
    return dispatch(limited, new LimitedHandler(handler, maxBytes, deadline))
  }
  return agent.compose(interceptors.redirect({ maxRedirections: maxRedirects, throwOnMaxRedirect: true }), limits)
}

/**
 * undici's fetch over a safe dispatcher (its own unless one is given), for code outside Effect
 * such as jose's `createRemoteJWKSet`. Redirects follow the caller's `redirect` mode within
 * `maxRedirects`; the body limit also applies after decompression. Refusals reject with
 * `SafeHttpError` (or, for a body cut short, a fetch TypeError whose `cause` is one).
 */
export const safeFetch = (options: SafeHttpOptions & { readonly dispatcher?: Dispatcher | undefined }): SafeFetch => {
  const { maxResponseBytes, maxRedirects } = settingsOf(options)
  const dispatcher = options.dispatcher ?? makeSafeDispatcher(options)
  const following = dispatcher.compose((dispatch) => (opts, handler) => {
    const redirecting: RedirectOptions = { ...opts, maxRedirections: maxRedirects }
    return dispatch(redirecting, handler)
  })
  return async (input, init = {}) => {
    const follow = (init.redirect ?? "follow") === "follow" && maxRedirects > 0
    // the global fetch types describe Node's bundled undici; both copies take the same init at run time
    const response = await undiciFetch(input, {
      ...init as UndiciRequestInit,
      redirect: init.redirect === "error" ? "error" : "manual",
      dispatcher: follow ? following : dispatcher
    }).catch((error: unknown) => {
      throw error instanceof TypeError && error.cause instanceof SafeHttpError ? error.cause : error
    })
    return limitBody(response, maxResponseBytes)
  }
}

const limitBody = (response: UndiciResponse, maxBytes: number): Response => {
  const init = { status: response.status, statusText: response.statusText, headers: [...response.headers] }
  if (response.body === null) return withUrl(new Response(null, init), response.url)
  const reader = response.body.getReader()
  let received = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read()
        if (chunk.done) return controller.close()
        received += chunk.value.byteLength
        if (received > maxBytes) {
          const error = tooLarge(maxBytes)
          controller.error(error)
          return reader.cancel(error)
        }
        controller.enqueue(chunk.value)
      } catch (error) {
        controller.error(error instanceof TypeError && error.cause instanceof SafeHttpError ? error.cause : error)
      }
    },
    cancel: (reason) => reader.cancel(reason)
  })
  return withUrl(new Response(body, init), response.url)
}

const withUrl = (response: Response, url: string): Response => Object.defineProperty(response, "url", { value: url })

/** The guarded dispatcher and fetch for code outside Effect; Effect code uses `HttpClient`. */
export class SafeHttp extends Context.Service<SafeHttp, {
  readonly dispatcher: Dispatcher
  readonly fetch: SafeFetch
}>()("@podium/adapters-providers/SafeHttpClient/SafeHttp") {
  /** `SafeHttp` and Effect's `HttpClient`, sharing one connection pool that closes with the layer. */
  static layer(options: SafeHttpOptions): Layer.Layer<SafeHttp | HttpClient.HttpClient> {
    const dispatcher = Layer.effect(NodeHttpClient.Dispatcher)(
      Effect.acquireRelease(
        Effect.sync(() => makeSafeDispatcher(options)),
        (dispatcher) => Effect.promise(() => dispatcher.destroy())
      )
    )
    const service = Layer.effect(SafeHttp)(Effect.gen(function*() {
      const dispatcher = yield* NodeHttpClient.Dispatcher
      return SafeHttp.of({ dispatcher, fetch: safeFetch({ ...options, dispatcher }) })
    }))
    return Layer.mergeAll(NodeHttpClient.layerUndiciNoDispatcher, service).pipe(Layer.provide(dispatcher))
  }
}
