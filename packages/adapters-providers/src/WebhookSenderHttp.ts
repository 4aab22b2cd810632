import { type SendResult, type WebhookMessage, WebhookSender } from "@podium/domain/models"
import { DateTime, Duration, Effect, Layer } from "effect"
import { createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto"
import { SafeHttp, SafeHttpError, type SafeRequestOptions } from "./SafeHttpClient.ts"

export interface WebhookSenderHttpOptions {
  /** Bounds one delivery: resolving, connecting, sending and the answer's status. Default 10 seconds. */
  readonly timeout?: Duration.Input | undefined
}

const secretPrefix = "whsec_"
const userAgent = "Podium-Webhooks/1.0"
/** Only the status matters; a little of the body is read so the connection can be reused, the rest is dropped. */
const answerLimitBytes = 4 * 1024

/** Signing keys imported once per secret (importing one costs more than the HMAC of a delivery). */
const keys = new Map<string, KeyObject>()
const maxKeys = 1024

const keyOf = (secret: string): KeyObject => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= maxKeys) keys.clear()
    key = createSecretKey(Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, "base64"))
    keys.set(secret, key)
  }
  return key
}

/**
 * The Standard Webhooks `webhook-signature` value: `v1,` and the base64 HMAC-SHA256 of
 * `{messageId}.{timestampSeconds}.{body}`, keyed by the base64-decoded secret after `whsec_`.
 */
export const sign = (secret: string, messageId: string, timestampSeconds: number, body: string): string => {
  const mac = createHmac("sha256", keyOf(secret)).update(`${messageId}.${timestampSeconds}.${body}`, "utf8").digest("base64")
  return `v1,${mac}`
}

const errorChain = (error: unknown): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  for (let inner = error; inner !== undefined && chain.length < 10; inner = inner instanceof Error ? inner.cause : undefined) {
    chain.push(inner)
  }
  return chain
}

const codeOf = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL"])
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"])
const closedCodes = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"])

/**
 * Why a delivery got no answer, in words fit for the log: built from the host and error codes
 * only, so neither the secret nor anything a receiver said can end up there. The address guard's
 * own refusal is kept whole, since it names the setting that allows the address.
 */
const notSentReason = (error: unknown, host: string, timeoutSeconds: number): string => {
  const chain = errorChain(error)
  const blocked = chain.find((_): _ is SafeHttpError => _ instanceof SafeHttpError && _.reason === "BlockedAddress")
  if (blocked !== undefined) return blocked.message
  const codes = chain.map(codeOf).filter((_) => _ !== undefined)
  if (chain.some((_) => _ instanceof SafeHttpError && _.reason === "Timeout") || codes.some((_) => timeoutCodes.has(_))) {
    return `${host} did not answer within ${timeoutSeconds} s`
  }
  if (codes.some((_) => dnsCodes.has(_))) return `could not resolve ${host}`
  if (codes.includes("ECONNREFUSED")) return `${host} refused the connection`
  if (codes.includes("EHOSTUNREACH") || codes.includes("ENETUNREACH")) return `${host} is unreachable`
  const tls = codes.find((_) => _.startsWith("ERR_TLS_") || _.startsWith("ERR_SSL_") || /CERT|SELF_SIGNED/.test(_))
  if (tls !== undefined) return `the TLS handshake with ${host} failed (${tls})`
  if (codes.some((_) => closedCodes.has(_))) return `${host} closed the connection without answering`
  return codes[0] === undefined ? `could not deliver to ${host}` : `could not deliver to ${host} (${codes[0]})`
}

const parseTarget = (url: string): URL | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed : undefined
  } catch {
    return undefined
  }
}

const make = Effect.fnUntraced(function*(options: WebhookSenderHttpOptions) {
  const { dispatcher } = yield* SafeHttp
  const timeoutMillis = Duration.toMillis(options.timeout ?? "10 seconds")
  const timeoutSeconds = timeoutMillis / 1000

  /**
   * One delivery, in plain promises: deliveries are many and small, so each costs no fiber, race
   * or timer of Effect's, only the request. Never rejects. Aborting `controller` ends it at once.
   */
  const deliver = async (input: WebhookMessage, controller: AbortController): Promise<SendResult> => {
    const target = parseTarget(input.url)
    if (target === undefined) return { _tag: "NotSent", reason: "the webhook URL is not an http(s) URL" }
    const timestampSeconds = Math.floor(DateTime.toEpochMillis(input.timestamp) / 1000)
    // The pool's deadline can only cut a request short once it has a connection; this one also
    // bounds name resolution and the handshake, whose own limit is the pool's connect time-out.
    let timedOut: SafeHttpError | undefined
    const timer = setTimeout(() => {
      timedOut = new SafeHttpError("Timeout", `no answer within ${timeoutMillis} ms`)
      controller.abort(timedOut)
    }, timeoutMillis)
    try {
      // A webhook is answered where it lands: a redirect is just a status (maxRedirections 0), and
      // the pool checks the address it connects to after resolving the name, for every delivery.
      // The pool's body limit is lifted because it would turn a long answer into no answer; the
      // body is capped below instead.
      const request: SafeRequestOptions = {
        origin: target.origin,
        path: target.pathname + target.search,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": userAgent,
          "webhook-id": input.messageId,
          "webhook-timestamp": String(timestampSeconds),
          "webhook-signature": sign(input.secret, input.messageId, timestampSeconds, input.body)
        },
        body: input.body,
        maxRedirections: 0,
        deadlineMs: timeoutMillis,
        maxResponseBytes: Number.POSITIVE_INFINITY,
        signal: controller.signal
      }
      const response = await dispatcher.request(request)
      clearTimeout(timer)
      // never rejects; a body longer than the limit is cut off, a slow one by the pool's deadline
      await response.body.dump({ limit: answerLimitBytes }).catch(() => null)
      return { _tag: "Answered", status: response.statusCode }
    } catch (error) {
      return { _tag: "NotSent", reason: notSentReason(timedOut ?? error, target.host, timeoutSeconds) }
    } finally {
      clearTimeout(timer)
    }
  }

  /** All at once (the caller bounds how many), each with its own time-out; interrupting aborts them all. */
  const deliverAll = (inputs: ReadonlyArray<WebhookMessage>) =>
    Effect.promise(async (interrupted) => {
      const controllers = inputs.map(() => new AbortController())
      const abortAll = () => controllers.forEach((controller) => controller.abort(interrupted.reason))
      interrupted.addEventListener("abort", abortAll, { once: true })
      try {
        return await Promise.all(inputs.map((input, i) => deliver(input, controllers[i]!)))
      } finally {
        interrupted.removeEventListener("abort", abortAll)
      }
    })

  const send = Effect.fn("WebhookSenderHttp.send")(function*(input: WebhookMessage) {
    return (yield* deliverAll([input]))[0]!
  })

  const sendAll = Effect.fn("WebhookSenderHttp.sendAll")(function*(inputs: ReadonlyArray<WebhookMessage>) {
    return inputs.length === 0 ? [] : yield* deliverAll(inputs)
  })

  const newSecret = Effect.sync(() => `${secretPrefix}${randomBytes(24).toString("base64")}`)

  return WebhookSender.of({ send, sendAll, newSecret })
})

/** Standard Webhooks deliveries over the SSRF-guarded pool of `SafeHttp`; never fails, never follows a redirect. */
export const WebhookSenderHttp = {
  layer: (options: WebhookSenderHttpOptions = {}): Layer.Layer<WebhookSender, never, SafeHttp> =>
    Layer.effect(WebhookSender, make(options))
}
