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

/** Bytes a streamed body holds for its reader before the socket is paused (as a Node stream's default). */
const highWater = 64 * 1024

/**
 * A streamed answer's body over the guarded pool, with a dispatch handler of our own as `exchange`
 * has (no Node stream, promise, abort controller or async resource per call): the head resumes
 * `opened`, then the chunks wait here for the reader, and the socket is paused while they hold
 * `highWater` bytes or more, so the upstream is read no faster than the stream is pulled.
 * `destroy` aborts the request (and closes its socket); `discardRest` lets a finished answer's
 * last bytes arrive unread, so the connection can be reused.
 */
class StreamedBody {
  status = 0
  contentType = ""
  /** Set once the whole body has arrived. */
  complete = false
  /** Why the exchange failed after its head, if it did. */
  broken: unknown = undefined
  destroyed = false
  /** Called on every change a waiting reader may care about (data, end, error). */
  wake: () => void = () => {}
  #controller: Dispatcher.DispatchController | undefined
  #chunks: Array<Buffer> = []
  #held = 0
  #discarding = false
  #opened: ((result: Effect.Effect<StreamedBody, unknown>) => void) | undefined

  constructor(opened: (result: Effect.Effect<StreamedBody, unknown>) => void) {
    this.#opened = opened
  }

  readonly handler: Dispatcher.DispatchHandler = {
    onRequestStart: (controller) => {
      this.#controller = controller
      if (this.destroyed) controller.abort(new Error("closed"))
    },
    onResponseStart: (_, statusCode, headers) => {
      this.status = statusCode
      const value = headers["content-type"]
      this.contentType = (Array.isArray(value) ? value[0] ?? "" : value ?? "").toLowerCase()
      this.#open(Effect.succeed(this))
    },
    onResponseData: (controller, chunk) => {
      if (this.#discarding) return
      this.#chunks.push(chunk)
      this.#held += chunk.length
      if (this.#held >= highWater) controller.pause()
      this.wake()
    },
    onResponseEnd: () => {
      this.complete = true
      this.wake()
    },
    onResponseError: (_, error) => {
      if (this.#opened !== undefined) return this.#open(Effect.fail(error))
      this.broken ??= error
      this.wake()
    }
  }

  #open(result: Effect.Effect<StreamedBody, unknown>) {
    const opened = this.#opened
    this.#opened = undefined
    opened?.(result)
  }

  /** The next chunk held, or null. */
  read(): Buffer | null {
    const chunk = this.#chunks.shift()
    if (chunk === undefined) return null
    this.#held -= chunk.length
    if (this.#held < highWater && this.#controller?.paused === true) this.#controller.resume()
    return chunk
  }

  /** Every chunk has arrived and been read. */
  get readableEnded(): boolean {
    return this.complete && this.#chunks.length === 0
  }

  /** At most `max` bytes of the body as text, once it has ended or holds that many; the rest is not waited for. */
  text(max: number): Effect.Effect<string> {
    return Effect.callback<string>((resume) => {
      const check = () => {
        if (!this.complete && this.broken === undefined && !this.destroyed && this.#held < max) return
        this.wake = () => {}
        const bytes = Buffer.concat(this.#chunks).subarray(0, max)
        if (!this.complete) this.destroy()
        resume(Effect.succeed(bytes.toString("utf8")))
      }
      this.wake = check
      check()
    })
  }

  destroy(reason: Error = new Error("closed")) {
    if (this.destroyed) return
    this.destroyed = true
    this.#chunks = []
    this.#held = 0
    this.#controller?.abort(reason)
    this.wake()
  }

  /** Lets what is left arrive unread, for at most `ms`, then gives the connection up. */
  discardRest(ms: number) {
    if (this.complete || this.destroyed) return
    this.#discarding = true
    this.#chunks = []
    this.#held = 0
    const drop = setTimeout(() => this.destroy(), ms).unref()
    this.wake = () => {
      if (this.complete || this.broken !== undefined) clearTimeout(drop)
    }
    if (this.#controller?.paused === true) this.#controller.resume()
  }
}

/** What a stream needs once its events flow. */
interface EventSource {
  readonly body: StreamedBody
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
  let claimed = false
  body.wake = () => {
    const resume = waiter
    waiter = undefined
    resume?.()
  }
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
    for (let chunk = body.read(); chunk !== null; chunk = body.read()) {
      const events = parser.push(chunk)
      if (events !== undefined) return Effect.succeed([events] as const)
    }
    if (body.broken !== undefined) return failMidway(body.broken)
    if (body.readableEnded) {
      // an error event said why it ended: it was passed on
      return parser.error !== null ? Cause.done() : Effect.fail(source.failed(`${source.who} ended the stream early`))
    }
    if (body.destroyed) return failMidway(undefined)
    return Effect.callback<Arr.NonEmptyReadonlyArray<Uint8Array>, ChatProviderFailed | Cause.Done>((resume) => {
      const idle = setTimeout(() => {
        waiter = undefined
        body.broken ??= new SafeHttpError("Timeout", "idle")
        body.destroy()
        resume(failMidway(body.broken))
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
    // what follows [DONE] is not passed on
    if (parser.done) body.discardRest(source.idleMs)
    else body.destroy()
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
    const answer = yield* Effect.callback<StreamedBody, unknown>((resume) => {
      let settled = false
      const settle = (result: Effect.Effect<StreamedBody, unknown>) => {
        if (settled) return
        settled = true
        clearTimeout(deadline)
        resume(result)
      }
      const body = new StreamedBody(settle)
      // a request still waiting for its connection has no controller to abort yet: the wait ends here
      const deadline = setTimeout(() => {
        settle(Effect.fail(new SafeHttpError("Timeout", "no answer")))
        body.destroy(new SafeHttpError("Timeout", `no answer within ${timeoutMillis} ms`))
      }, timeoutMillis)
      const request: SafeRequestOptions = {
        origin: url.origin,
        path: url.pathname + url.search,
        method: "POST",
        headers,
        body: payload,
        maxRedirections: 0,
        deadlineMs: NO_DEADLINE_MS,
        maxResponseBytes: Number.POSITIVE_INFINITY
      }
      try {
        dispatcher.dispatch(request, body.handler)
      } catch (error) {
        settle(Effect.fail(error))
      }
      // interrupted: before the answer this aborts the request, after it closes the body
      return Effect.sync(() => {
        clearTimeout(deadline)
        body.destroy()
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
    const body = answer.success
    const { contentType, status } = body
    if (status < 200 || status >= 300 || !contentType.startsWith("text/event-stream")) {
      const text = yield* body.text(ERROR_BODY_BYTES)
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
    yield* Effect.addFinalizer(() => Effect.sync(() => parser.done || body.destroy()))
    let endedMs: number | undefined
    const events = pulledEvents({
      body,
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
