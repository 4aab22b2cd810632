import {
  type ChatCompletion,
  ChatProvider,
  ChatProviderFailed,
  type ChatRequest,
  type ChatTarget,
  type ChatUsage,
} from "@podium/domain/inference"
import { hotSpan, storableText } from "@podium/domain/shared"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { redactSecret } from "./Redaction.ts"
import { SafeHttp, SafeHttpError, type SafeRequestOptions } from "./SafeHttpClient.ts"

export interface ChatProviderOpenAiOptions {
  /** OpenRouter-style API root, e.g. `https://openrouter.ai/api/v1`; unset means Router candidates cannot be called. */
  readonly routerBaseUrl?: string | undefined
  /** Hugging Face-style hub root, e.g. `https://huggingface.co`; unset means Hub candidates cannot be called. */
  readonly hubBaseUrl?: string | undefined
  /** Bounds one completion, body included. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
}

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const isCount = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)

/** The address guard's refusal, which says how to allow the address. */
const blockedAddress = (error: unknown): SafeHttpError | undefined => {
  for (let inner = error; inner instanceof Error; inner = inner.cause) {
    if (inner instanceof SafeHttpError && inner.reason === "BlockedAddress") return inner
  }
  return undefined
}

/** The pool's deadline (SafeHttpError), or undici's own header/body time-outs. */
const isTimeout = (error: unknown): boolean =>
  (error instanceof SafeHttpError && error.reason === "Timeout") ||
  (error instanceof Error && "code" in error &&
    (error.code === "UND_ERR_HEADERS_TIMEOUT" || error.code === "UND_ERR_BODY_TIMEOUT"))

const parseUrl = (url: string): URL | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : undefined
  } catch {
    return undefined
  }
}

const trimSlashes = (url: string) => url.replace(/\/+$/, "")

const describePlatform = (platform: ChatTarget["platform"]) =>
  platform === "Router" ? "the router" : platform === "Hub" ? "the hub" : "the endpoint"

const endpointOf = (
  target: ChatTarget,
  options: ChatProviderOpenAiOptions
): { readonly url: string } | { readonly missing: string } => {
  const configured = (base: string | null | undefined, missing: string, path: string) =>
    base === undefined || base === null || trimSlashes(base) === "" ? { missing } : { url: `${trimSlashes(base)}${path}` }
  switch (target.platform) {
    case "Router":
      return configured(options.routerBaseUrl, "the router is not configured", "/chat/completions")
    case "Hub":
      // The hub's OpenAI-compatible router (Inference Providers) lives under `/v1` of the hub root.
      return configured(options.hubBaseUrl, "the hub is not configured", "/v1/chat/completions")
    case "Custom":
      return configured(target.url, "the candidate has no endpoint URL", "/chat/completions")
  }
}

/** Upstream words reach users, traces and logs: never let them repeat the token in any form. */
const scrub = (text: string, token: Option.Option<Redacted.Redacted<string>>) =>
  Option.isNone(token) ? text : redactSecret(text, Redacted.value(token.value))

/** The message of an OpenAI-shaped `{"error": {"message"}}` (or a bare `{"error": "..."}`). */
const upstreamMessage = (body: unknown): string | undefined => {
  if (!isRecord(body)) return undefined
  const error = body.error
  if (typeof error === "string") return error
  if (isRecord(error) && typeof error.message === "string") return error.message
  return undefined
}

const usageOf = (body: Record<string, unknown>): ChatUsage | null => {
  const usage = body.usage
  if (!isRecord(usage) || !isCount(usage.prompt_tokens) || !isCount(usage.completion_tokens)) return null
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: isCount(usage.total_tokens) ? usage.total_tokens : usage.prompt_tokens + usage.completion_tokens
  }
}

/** OpenRouter reports what it charged, in credits (USD), as `usage.cost`. */
const reportedCost = (body: Record<string, unknown>): number | null =>
  isRecord(body.usage) && isCount(body.usage.cost) ? body.usage.cost : null

const outputOf = (choices: ReadonlyArray<unknown>): string | null => {
  const first = choices[0]
  if (!isRecord(first) || !isRecord(first.message)) return null
  return typeof first.message.content === "string" ? first.message.content : null
}

const make = Effect.fnUntraced(function*(options: ChatProviderOpenAiOptions) {
  const { dispatcher } = yield* SafeHttp
  const timeout = options.timeout ?? "60 seconds"
  const timeoutSeconds = Duration.toSeconds(timeout)
  const timeoutMillis = Duration.toMillis(timeout)

  const complete = Effect.fnUntraced(function*(
    target: ChatTarget,
    chat: ChatRequest
  ): Effect.fn.Return<ChatCompletion, ChatProviderFailed> {
    const started = yield* Clock.currentTimeNanos
    const elapsedMs = Effect.map(Clock.currentTimeNanos, (now) => Math.round(Number(now - started) / 1e5) / 10)
    const fail = (reason: string, upstream_status: number | null = null) =>
      Effect.flatMap(elapsedMs, (latency_ms) =>
        Effect.fail(
          new ChatProviderFailed({
            candidate_id: target.candidateId,
            candidate_name: target.candidateName,
            reason: storableText(scrub(reason, target.token)),
            upstream_status,
            latency_ms
          })
        ))
    const who = describePlatform(target.platform)

    const endpoint = endpointOf(target, options)
    if ("missing" in endpoint) return yield* fail(endpoint.missing)

    const url = parseUrl(endpoint.url)
    if (url === undefined) return yield* fail(`${who} has an invalid URL`)
    const headers: Record<string, string> = { accept: "application/json", "content-type": "application/json" }
    if (Option.isSome(target.token)) {
      const token = Redacted.value(target.token.value)
      if (target.platform !== "Custom" || target.authType === "bearer") {
        headers.authorization = `Bearer ${token}`
      } else if (target.authType === "header") {
        const name = target.authHeaderName?.trim().toLowerCase() ?? ""
        if (name === "") return yield* fail("the candidate uses header auth but names no header")
        headers[name] = token
      }
    }
    const payload = JSON.stringify({
      ...(target.modelName === null ? {} : { model: target.modelName }),
      messages: chat.messages.map(({ content, role }) => ({ role, content })),
      ...(chat.temperature === undefined ? {} : { temperature: chat.temperature }),
      ...(chat.max_tokens === undefined ? {} : { max_tokens: chat.max_tokens }),
      ...(chat.response_format === undefined ? {} : { response_format: chat.response_format })
    })

    // undici straight over the guarded pool, with the pool's deadline as the time-out: on the
    // inference path every layer between us and the socket is latency. A chat completion is a POST
    // that OpenAI-compatible APIs answer directly: a redirect is an answer like any other status.
    const answer = yield* Effect.tryPromise({
      try: async (signal) => {
        const options: SafeRequestOptions = {
          origin: url.origin,
          path: url.pathname + url.search,
          method: "POST",
          headers,
          body: payload,
          signal,
          maxRedirections: 0,
          deadlineMs: timeoutMillis
        }
        const response = await dispatcher.request(options)
        return { status: response.statusCode, text: await response.body.text() }
      },
      catch: (cause) => cause
    }).pipe(Effect.result)
    if (answer._tag === "Failure") {
      const blocked = blockedAddress(answer.failure)
      return yield* fail(
        blocked !== undefined
          ? blocked.message
          : isTimeout(answer.failure)
          ? `${who} did not answer within ${timeoutSeconds} s`
          : `could not reach ${who}`
      )
    }
    const { status, text } = answer.success
    const body = parseJson(text)

    if (status < 200 || status >= 300) {
      const message = Option.flatMap(body, (_) => Option.fromNullishOr(upstreamMessage(_)))
      return yield* fail(
        Option.match(message, {
          onNone: () => `${who} answered ${status}`,
          // scrub before cutting, so a cut cannot leave part of the token behind
          onSome: (message) => `${who} answered ${status}: ${scrub(message, target.token).slice(0, 300)}`
        }),
        status
      )
    }
    if (Option.isNone(body)) return yield* fail(`${who} answered with something other than JSON`, status)
    const json = body.value
    if (!isRecord(json) || !Array.isArray(json.choices)) {
      const message = upstreamMessage(json)
      return yield* fail(
        message === undefined
          ? `${who} answered without choices`
          : `${who} answered without choices: ${scrub(message, target.token).slice(0, 300)}`,
        status
      )
    }

    const usage = usageOf(json)
    const priced = usage !== null && target.inputPricePerMTokens !== null && target.outputPricePerMTokens !== null
      ? (usage.prompt_tokens * target.inputPricePerMTokens + usage.completion_tokens * target.outputPricePerMTokens) /
        1e6
      : null
    return {
      body: text,
      output: Option.getOrNull(Option.map(Option.fromNullishOr(outputOf(json.choices)), storableText)),
      usage,
      costUsd: reportedCost(json) ?? priced,
      latencyMs: yield* elapsedMs
    }
  }, hotSpan("ChatProviderOpenAi.complete"))

  return ChatProvider.of({ complete })
})

/** OpenAI chat completions against Router, Hub and Custom candidates over the SSRF-guarded pool of `SafeHttp`. */
export const ChatProviderOpenAi = {
  layer: (options: ChatProviderOpenAiOptions): Layer.Layer<ChatProvider, never, SafeHttp> =>
    Layer.effect(ChatProvider, make(options))
}
