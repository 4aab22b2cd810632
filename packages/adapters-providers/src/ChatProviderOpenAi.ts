import {
  type ChatCompletion,
  ChatProvider,
  ChatProviderFailed,
  type ChatRequest,
  type ChatStream,
  type ChatTarget,
  type ChatUsage,
  type StreamOptions,
  type StreamReceived
} from "@podium/domain/inference"
import { hotSpan, storableText } from "@podium/domain/shared"
import { type Array as Arr, Cause, Channel, Clock, Duration, Effect, Layer, Option, Redacted, Scope, Stream } from "effect"
import type { Readable } from "node:stream"
import type { Dispatcher } from "undici"
import { ChatStreamEvents, isRecord, reportedCost, upstreamMessage, usageOf } from "./ChatStreamEvents.ts"
import { redactSecret } from "./Redaction.ts"
import { SafeHttp, SafeHttpError, type SafeRequestOptions } from "./SafeHttpClient.ts"

export interface ChatProviderOpenAiOptions {
  /** OpenRouter-style API root, e.g. `https://openrouter.ai/api/v1`; unset means Router candidates cannot be called. */
  readonly routerBaseUrl?: string | undefined
  /** Hugging Face-style hub root, e.g. `https://huggingface.co`; unset means Hub candidates cannot be called. */
  readonly hubBaseUrl?: string | undefined
  /**
   * Bounds one completion, body included; for a stream, the wait for its headers and each wait for
   * its next bytes, not the whole stream. Default 60 seconds.
   */
  readonly timeout?: Duration.Input | undefined
}

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

/** The longest timer Node keeps (about 24.8 days): the pool's deadline for a stream, which sets its own. */
const NO_DEADLINE_MS = 2_147_483_647
/** How much of an error answer to a stream request is read for its message. */
const ERROR_BODY_BYTES = 64 * 1024

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

/** Endpoint URLs parsed so far: a candidate's URL is parsed once, not on every call (the cache is cleared when full). */
const parsedUrls = new Map<string, URL | undefined>()

const parseUrlCached = (url: string): URL | undefined => {
  if (parsedUrls.has(url)) return parsedUrls.get(url)
  if (parsedUrls.size >= 1_000) parsedUrls.clear()
  const parsed = parseUrl(url)
  parsedUrls.set(url, parsed)
  return parsed
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

/** Where and how to call a target, or why it cannot be called. */
const callOf = (
  target: ChatTarget,
  options: ChatProviderOpenAiOptions,
  accept: string
): { readonly url: URL; readonly headers: Record<string, string> } | { readonly missing: string } => {
  const endpoint = endpointOf(target, options)
  if ("missing" in endpoint) return endpoint
  const url = parseUrlCached(endpoint.url)
  if (url === undefined) return { missing: `${describePlatform(target.platform)} has an invalid URL` }
  const headers: Record<string, string> = { accept, "content-type": "application/json" }
  if (Option.isSome(target.token)) {
    const token = Redacted.value(target.token.value)
    if (target.platform !== "Custom" || target.authType === "bearer") {
      headers.authorization = `Bearer ${token}`
    } else if (target.authType === "header") {
      const name = target.authHeaderName?.trim().toLowerCase() ?? ""
      if (name === "") return { missing: "the candidate uses header auth but names no header" }
      headers[name] = token
    }
  }
  return { url, headers }
}

/**
 * The request body: the caller's parameters as given, under the fields Podium sets (which win).
 * Messages go as they came: parts, `tool_calls`, `tool_call_id` and null content included.
 */
const payloadOf = (target: ChatTarget, chat: ChatRequest, streamed: boolean): string => {
  const { messages: _messages, model: _model, stream: _stream, stream_options: _streamOptions, ...parameters } =
    chat.parameters ?? {}
  return JSON.stringify({
    ...(target.modelName === null ? {} : { model: target.modelName }),
    messages: chat.messages,
    ...parameters,
    ...(chat.temperature === undefined ? {} : { temperature: chat.temperature }),
    ...(chat.max_tokens === undefined ? {} : { max_tokens: chat.max_tokens }),
    ...(chat.response_format === undefined ? {} : { response_format: chat.response_format }),
    // the usage chunk is always asked for: it is what the call costs
    ...(streamed ? { stream: true, stream_options: { include_usage: true } } : {})
  })
}

/** Upstream words reach users, traces and logs: never let them repeat the token in any form. */
const scrub = (text: string, token: Option.Option<Redacted.Redacted<string>>) =>
  Option.isNone(token) ? text : redactSecret(text, Redacted.value(token.value))

/** Why the upstream refused, from its error body: its status, and its message scrubbed and cut short. */
const refusal = (who: string, status: number, text: string, token: ChatTarget["token"]): string => {
  const message = Option.flatMap(parseJson(text), (_) => Option.fromNullishOr(upstreamMessage(_)))
  return Option.match(message, {
    onNone: () => `${who} answered ${status}`,
    // scrub before cutting, so a cut cannot leave part of the token behind
    onSome: (message) => `${who} answered ${status}: ${scrub(message, token).slice(0, 300)}`
  })
}

const priceOf = (target: ChatTarget, usage: ChatUsage | null): number | null =>
  usage !== null && target.inputPricePerMTokens !== null && target.outputPricePerMTokens !== null
    ? (usage.prompt_tokens * target.inputPricePerMTokens + usage.completion_tokens * target.outputPricePerMTokens) / 1e6
    : null

/** Milliseconds to one decimal. */
const msBetween = (started: bigint, now: bigint) => Math.round(Number(now - started) / 1e5) / 10

/** The content of choice 0, else its tool calls as JSON (the output records a call when there is no text). */
const outputOf = (choices: ReadonlyArray<unknown>): string | null => {
  const first = choices[0]
  if (!isRecord(first) || !isRecord(first.message)) return null
  const { content, tool_calls } = first.message
  if (typeof content === "string") return content
  return Array.isArray(tool_calls) && tool_calls.length > 0 ? JSON.stringify(tool_calls) : null
}

const contentTypeOf = (headers: Dispatcher.ResponseData["headers"]): string => {
  const value = headers["content-type"]
  return (Array.isArray(value) ? value[0] ?? "" : value ?? "").toLowerCase()
}

/** At most `max` bytes of a body, as text; the rest is not waited for. */
const readCapped = async (body: Readable, max: number): Promise<string> => {
  const parts: Array<Buffer> = []
  let length = 0
  for await (const chunk of body) {
    parts.push(chunk as Buffer)
    length += (chunk as Buffer).length
    if (length >= max) break
  }
  return Buffer.concat(parts).subarray(0, max).toString("utf8")
}

/**
 * One exchange over the guarded pool, its body collected as it comes: a handler of the dispatcher's
 * own, without the stream, promises, abort signal and async resource `dispatcher.request` makes
 * per call. The pool's interceptors (deadline, size limit, redirects) apply as to any request;
 * interrupting it aborts the request.
 */
const exchange = (dispatcher: Dispatcher, options: SafeRequestOptions): Effect.Effect<{ readonly status: number; readonly text: string }, unknown> =>
  Effect.callback((resume) => {
    let controller: Dispatcher.DispatchController | undefined
    let interrupted = false
    let status = 0
    const chunks: Array<Buffer> = []
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (started) => {
        controller = started
        if (interrupted) started.abort(new Error("interrupted"))
      },
      onResponseStart: (_, statusCode) => {
        status = statusCode
      },
      onResponseData: (_, chunk) => {
        chunks.push(chunk)
      },
      onResponseEnd: () => resume(Effect.succeed({ status, text: utf8Text(chunks) })),
      onResponseError: (_, error) => resume(Effect.fail(error))
    }
    try {
      dispatcher.dispatch(options, handler)
    } catch (error) {
      resume(Effect.fail(error))
    }
    return Effect.sync(() => {
      interrupted = true
      controller?.abort(new Error("interrupted"))
    })
  })

/** A body's bytes as text, as undici's `body.text()` reads them (UTF-8, a leading BOM dropped). */
const utf8Text = (chunks: ReadonlyArray<Buffer>): string => {
  const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

type StreamAnswer =
  | { readonly _tag: "Refused"; readonly status: number; readonly text: string; readonly contentType: string }
  | { readonly _tag: "Events"; readonly status: number; readonly body: Readable }

/** What a stream needs once its events flow. */
interface EventSource {
  readonly body: Readable
  readonly parser: ChatStreamEvents
  readonly idleMs: number
  /** Called once, when the stream has ended for any reason. */
  readonly onEnd: () => void
  readonly failed: (reason: string) => ChatProviderFailed
  readonly who: string
  readonly idleSeconds: number
}

/**
 * The body's events, pulled: each pull reads what the body holds (`read()` in paused mode, so
 * undici stops reading the socket once its buffer is full) and waits, at most `idleMs`, only when
 * it holds nothing. Closing the stream before `[DONE]` destroys the body, which aborts the request
 * and closes its socket; after `[DONE]` the rest of the body is drained, so the connection can be
 * reused.
 */
const pulledEvents = (source: EventSource): Stream.Stream<Uint8Array, ChatProviderFailed> => {
  const { body, parser } = source
  let waiter: (() => void) | undefined
  let broken: unknown
  let claimed = false
  const wake = () => {
    const resume = waiter
    waiter = undefined
    resume?.()
  }
  body.on("readable", wake)
  body.on("end", wake)
  body.on("close", wake)
  body.on("error", (error) => {
    broken ??= error
    wake()
  })
  // a stream nobody runs must not hold its connection for ever
  const unclaimed = setTimeout(() => {
    if (!claimed) body.destroy()
  }, source.idleMs).unref()

  const failMidway = (error: unknown) =>
    Effect.fail(source.failed(
      isTimeout(error) ? `${source.who} sent nothing for ${source.idleSeconds} s` : `${source.who} broke off the stream`
    ))

  const step = (): Pull => {
    if (parser.done) return Cause.done()
    for (let chunk = body.read() as Buffer | null; chunk !== null; chunk = body.read() as Buffer | null) {
      const events = parser.push(chunk)
      if (events !== undefined) return Effect.succeed([events] as const)
    }
    if (broken !== undefined) return failMidway(broken)
    if (body.readableEnded) {
      // an error event said why it ended: it was passed on
      return parser.error !== null ? Cause.done() : Effect.fail(source.failed(`${source.who} ended the stream early`))
    }
    if (body.destroyed) return failMidway(undefined)
    return Effect.callback<Arr.NonEmptyReadonlyArray<Uint8Array>, ChatProviderFailed | Cause.Done>((resume) => {
      const idle = setTimeout(() => {
        waiter = undefined
        broken ??= new SafeHttpError("Timeout", "idle")
        body.destroy()
        resume(failMidway(broken))
      }, source.idleMs)
      waiter = () => {
        clearTimeout(idle)
        resume(Effect.suspend(step))
      }
      return Effect.sync(() => {
        clearTimeout(idle)
        waiter = undefined
      })
    })
  }

  const close = () => {
    source.onEnd()
    if (body.readableEnded || body.destroyed) return
    if (!parser.done) {
      body.destroy()
      return
    }
    const drop = setTimeout(() => body.destroy(), source.idleMs).unref()
    const drain = () => {
      while (body.read() !== null) {
        // what follows [DONE] is not passed on
      }
    }
    body.on("readable", drain)
    body.once("close", () => clearTimeout(drop))
    drain()
  }

  return Stream.fromChannel(Channel.fromTransform((_, scope) =>
    Effect.sync(() => {
      claimed = true
      clearTimeout(unclaimed)
      return Effect.suspend(step)
    }).pipe(Effect.tap(Scope.addFinalizer(scope, Effect.sync(close))))
  ))
}

type Pull = Effect.Effect<Arr.NonEmptyReadonlyArray<Uint8Array>, ChatProviderFailed | Cause.Done>

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
    const elapsedMs = Effect.map(Clock.currentTimeNanos, (now) => msBetween(started, now))
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

    const call = callOf(target, options, "application/json")
    if ("missing" in call) return yield* fail(call.missing)
    const { headers, url } = call
    const payload = payloadOf(target, chat, false)

    // undici straight over the guarded pool, with the pool's deadline as the time-out: on the
    // inference path every layer between us and the socket is latency. A chat completion is a POST
    // that OpenAI-compatible APIs answer directly: a redirect is an answer like any other status.
    const answer = yield* Effect.result(exchange(dispatcher, {
      origin: url.origin,
      path: url.pathname + url.search,
      method: "POST",
      headers,
      body: payload,
      maxRedirections: 0,
      deadlineMs: timeoutMillis
    }))
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
    if (status < 200 || status >= 300) return yield* fail(refusal(who, status, text, target.token), status)
    const body = parseJson(text)
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
    return {
      body: text,
      output: Option.getOrNull(Option.map(Option.fromNullishOr(outputOf(json.choices)), storableText)),
      usage,
      costUsd: reportedCost(json) ?? priceOf(target, usage),
      latencyMs: yield* elapsedMs
    }
  }, hotSpan("ChatProviderOpenAi.complete"))

  const stream = Effect.fnUntraced(function*(
    target: ChatTarget,
    chat: ChatRequest,
    streamOptions: StreamOptions
  ): Effect.fn.Return<ChatStream, ChatProviderFailed, Scope.Scope> {
    // the stream outlives this effect: its clock is read directly
    const clock = yield* Clock.Clock
    const started = clock.currentTimeNanosUnsafe()
    const elapsedMs = () => msBetween(started, clock.currentTimeNanosUnsafe())
    const failed = (reason: string, upstream_status: number | null = null) =>
      new ChatProviderFailed({
        candidate_id: target.candidateId,
        candidate_name: target.candidateName,
        reason: storableText(scrub(reason, target.token)),
        upstream_status,
        latency_ms: elapsedMs()
      })
    const who = describePlatform(target.platform)

    const call = callOf(target, options, "text/event-stream")
    if ("missing" in call) return yield* Effect.fail(failed(call.missing))
    const { headers, url } = call
    const payload = payloadOf(target, chat, true)

    // The pool's deadline would bound the whole stream: it is lifted, and the wait for the headers
    // (here) and for each next bytes (in the pull) are bounded instead.
    const answer = yield* Effect.callback<StreamAnswer, unknown>((resume) => {
      const controller = new AbortController()
      let timedOut = false
      const deadline = setTimeout(() => {
        timedOut = true
        controller.abort(new SafeHttpError("Timeout", `no answer within ${timeoutMillis} ms`))
      }, timeoutMillis)
      const request: SafeRequestOptions = {
        origin: url.origin,
        path: url.pathname + url.search,
        method: "POST",
        headers,
        body: payload,
        signal: controller.signal,
        maxRedirections: 0,
        deadlineMs: NO_DEADLINE_MS,
        maxResponseBytes: Number.POSITIVE_INFINITY
      }
      const answered = async (): Promise<StreamAnswer> => {
        const response = await dispatcher.request(request)
        const status = response.statusCode
        const contentType = contentTypeOf(response.headers)
        if (status >= 200 && status < 300 && contentType.startsWith("text/event-stream")) {
          return { _tag: "Events", status, body: response.body }
        }
        return { _tag: "Refused", status, contentType, text: await readCapped(response.body, ERROR_BODY_BYTES) }
      }
      answered().then(
        (answer) => {
          clearTimeout(deadline)
          resume(Effect.succeed(answer))
        },
        (error: unknown) => {
          clearTimeout(deadline)
          resume(Effect.fail(timedOut ? new SafeHttpError("Timeout", "no answer") : error))
        }
      )
      // interrupted: before the answer this aborts the request, after it destroys the body
      return Effect.sync(() => {
        clearTimeout(deadline)
        controller.abort()
      })
    }).pipe(Effect.result)
    if (answer._tag === "Failure") {
      const blocked = blockedAddress(answer.failure)
      return yield* Effect.fail(failed(
        blocked !== undefined
          ? blocked.message
          : isTimeout(answer.failure)
          ? `${who} did not answer within ${timeoutSeconds} s`
          : `could not reach ${who}`
      ))
    }
    const reply = answer.success
    if (reply._tag === "Refused") {
      const { contentType, status, text } = reply
      if (status < 200 || status >= 300) return yield* Effect.fail(failed(refusal(who, status, text, target.token), status))
      const message = contentType.includes("json") ? upstreamMessage(Option.getOrUndefined(parseJson(text))) : undefined
      return yield* Effect.fail(failed(
        message === undefined
          ? `${who} answered with something other than an event stream`
          : `${who} answered without an event stream: ${scrub(message, target.token).slice(0, 300)}`,
        status
      ))
    }

    const parser = new ChatStreamEvents({
      includeUsage: streamOptions.includeUsage,
      answerAs: streamOptions.answerAs,
      scrub: (text) => scrub(text, target.token)
    })
    // the caller's scope closing before the stream ran to [DONE] (or ran at all) aborts the call
    yield* Effect.addFinalizer(() => Effect.sync(() => parser.done || reply.body.destroy()))
    let endedMs: number | undefined
    const events = pulledEvents({
      body: reply.body,
      parser,
      idleMs: timeoutMillis,
      idleSeconds: timeoutSeconds,
      who,
      failed,
      onEnd: () => endedMs ??= elapsedMs()
    })
    const received = (): StreamReceived => {
      const output = parser.output
      const usage = parser.usage
      return {
        output: output === null ? null : storableText(output),
        usage,
        costUsd: parser.reportedCost ?? priceOf(target, usage),
        latencyMs: endedMs ?? elapsedMs(),
        error: parser.error === null ? null : storableText(parser.error)
      }
    }
    return { events, received }
  }, hotSpan("ChatProviderOpenAi.stream"))

  return ChatProvider.of({ complete, stream })
})

/** OpenAI chat completions against Router, Hub and Custom candidates over the SSRF-guarded pool of `SafeHttp`. */
export const ChatProviderOpenAi = {
  layer: (options: ChatProviderOpenAiOptions): Layer.Layer<ChatProvider, never, SafeHttp> =>
    Layer.effect(ChatProvider, make(options))
}
