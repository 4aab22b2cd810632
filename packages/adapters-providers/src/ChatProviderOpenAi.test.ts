import { assert, describe, it } from "@effect/vitest"
import { ChatProvider, type ChatRequest, type ChatTarget, type ChatStream, type StreamOptions } from "@podium/domain/inference"
import { Effect, Layer, Option, Redacted, Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { ChatProviderOpenAi, type ChatProviderOpenAiOptions } from "./ChatProviderOpenAi.ts"
import { SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"
import { bonjourScript, chunk, event, usageEventOf } from "./testing/ChatChunks.ts"

const SECRET = "sk-secret-4f9a"

const completion = (usage: Record<string, unknown> | undefined) => ({
  id: "gen-123",
  object: "chat.completion",
  created: 1_790_000_000,
  model: "acme/tiny",
  provider: "Acme",
  choices: [{ index: 0, message: { role: "assistant", content: "Bonjour" }, finish_reason: "stop", logprobs: null }],
  ...(usage === undefined ? {} : { usage })
})

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const usageEvent = usageEventOf({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })

const script = bonjourScript(usageEvent)
const scriptBytes = Buffer.from(script)
/** Cut in the middle of the first data event and of 😀. */
const scriptPieces = (() => {
  const emoji = scriptBytes.indexOf(Buffer.from("😀"))
  const cuts = [40, emoji + 2, scriptBytes.length]
  return cuts.map((cut, i) => scriptBytes.subarray(i === 0 ? 0 : cuts[i - 1], cut))
})()

const toolScript = [
  event(chunk({ role: "assistant", content: null })),
  event(chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "weather", arguments: "" } }] })),
  event(chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] })),
  event(chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Paris\"}" } }] })),
  "data: [DONE]\n\n"
].join("")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Writes an event stream piece by piece, a few milliseconds apart, so the pieces arrive apart. */
const writeEvents = async (
  response: ServerResponse,
  pieces: ReadonlyArray<string | Uint8Array>,
  then: "end" | "reset" | "stall" = "end",
  gapMs = 10
) => {
  response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
  for (const piece of pieces) {
    response.write(piece)
    await sleep(gapMs)
  }
  if (then === "end") response.end()
  else if (then === "reset") response.socket?.destroy()
}

/** The fake's view of the last endless or big stream: when it closed, and how much it wrote by then. */
const upstreamStream = { closed: Promise.resolve(false), written: 0 }

/** Writes events until the reader goes away, honouring TCP backpressure: it writes only what is read. */
const writeEndlessly = (response: ServerResponse, eventSize: number) => {
  upstreamStream.written = 0
  upstreamStream.closed = new Promise((resolve) => response.on("close", () => resolve(!response.writableFinished)))
  response.writeHead(200, { "content-type": "text/event-stream" })
  const piece = event(chunk({ content: "x".repeat(eventSize) }))
  const write = () => {
    while (!response.destroyed) {
      upstreamStream.written += piece.length
      if (!response.write(piece)) return response.once("drain", write)
    }
  }
  write()
}

interface Seen {
  readonly method: string | undefined
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Record<string, unknown>
}
const seen: Array<Seen> = []

// The model name sent picks the fake's answer.
const fake = (request: IncomingMessage, response: ServerResponse) => {
  let raw = ""
  request.on("data", (chunk) => raw += chunk)
  request.on("end", () => {
    const body = JSON.parse(raw) as Record<string, unknown>
    seen.push({ method: request.method, path: request.url ?? "", headers: request.headers, body })
    const token = request.headers.authorization?.replace(/^Bearer /, "") ?? String(request.headers["x-api-key"] ?? "")
    switch (body.model) {
      case "cost":
        return json(response, 200, completion({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.0123 }))
      case "no-total":
        return json(response, 200, completion({ prompt_tokens: 1000, completion_tokens: 500 }))
      case "no-usage":
        return json(response, 200, completion(undefined))
      case "no-content":
        return json(response, 200, { ...completion(undefined), choices: [{ index: 0, message: { role: "assistant", content: null } }] })
      case "boom":
        return json(response, 500, { error: { message: `Provider failed for key ${token}: ${"x".repeat(400)}`, code: 500 } })
      case "unauthorised":
        return json(response, 401, { error: { message: `No auth credentials found for ${token}`, code: 401 } })
      case "html":
        return response.writeHead(502).end("<html>bad gateway</html>")
      case "moved":
        return response.writeHead(307, { location: "/api/v1/chat/completions" }).end()
      case "garbled":
        return response.writeHead(200, { "content-type": "application/json" }).end("{not json")
      case "no-choices":
        return json(response, 200, { error: { message: `Rate limited ${token}`, code: 429 } })
      case "echo-parts":
        return json(response, 401, {
          error: {
            message: `Incorrect API key provided: ${token.slice(0, 8)}****${token.slice(-6)} (basic ${
              Buffer.from(`user:${token}`).toString("base64")
            })`
          }
        })
      case "nul":
        return json(response, 200, {
          ...completion(undefined),
          choices: [{ index: 0, message: { role: "assistant", content: "a\u0000b\ud800c" } }]
        })
      case "tool-calls":
        return json(response, 200, {
          ...completion(undefined),
          choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: toolCalls }, finish_reason: "tool_calls" }]
        })
      case "stream":
        return writeEvents(response, scriptPieces)
      case "stream-crlf":
        return writeEvents(response, [script.replaceAll("\n", "\r\n")])
      case "stream-tools":
        return writeEvents(response, [toolScript])
      case "stream-reset":
        return writeEvents(response, [event(chunk({ content: "Bon" }))], "reset")
      case "stream-early":
        return writeEvents(response, [event(chunk({ content: "Bon" })), event(chunk({ content: "jour" }))])
      case "stream-error":
        return writeEvents(response, [
          event(chunk({ content: "Bon" })),
          event({ error: { message: `Overloaded for key ${token}`, code: 502 } })
        ])
      case "stream-stall":
        return writeEvents(response, [event(chunk({ content: "Bon" }))], "stall")
      case "stream-slow":
        return writeEvents(response, [...script.split(/(?<=\n\n)/)], "end", 100)
      case "stream-endless":
        return writeEndlessly(response, 10)
      case "stream-big":
        return writeEndlessly(response, 1000)
      case "hang":
        return
      case "slow":
        return setTimeout(() => json(response, 200, completion(undefined)), 400)
      default:
        return json(response, 200, completion({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 }))
    }
  })
}

const toolCalls = [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\":\"Paris\"}" } }]

const upstream = loopbackServer(fake)

const target = (overrides: Partial<ChatTarget> = {}): ChatTarget => ({
  candidateId: "cand-1",
  candidateName: "Tiny",
  platform: "Router",
  modelName: "acme/tiny",
  url: null,
  authType: "bearer",
  authHeaderName: null,
  token: Option.some(Redacted.make(SECRET)),
  inputPricePerMTokens: null,
  outputPricePerMTokens: null,
  ...overrides
})

const request: ChatRequest = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }] }

const complete = (
  chatTarget: ChatTarget,
  chatRequest: ChatRequest = request,
  options?: Partial<ChatProviderOpenAiOptions>
) =>
  ChatProvider.use((provider) => provider.complete(chatTarget, chatRequest)).pipe(
    Effect.provide(
      ChatProviderOpenAi.layer({ routerBaseUrl: `${upstream.url()}/api/v1/`, hubBaseUrl: `${upstream.url()}/hub`, ...options }).pipe(
        Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))
      )
    )
  )

const failure = (chatTarget: ChatTarget, options?: Partial<ChatProviderOpenAiOptions>) =>
  Effect.flip(complete(chatTarget, request, options))

const passOn: StreamOptions = { includeUsage: true }

/** Runs `use` over a stream of the target's answer, inside the layer (the pool closes with it). */
const streaming = <A, E>(
  chatTarget: ChatTarget,
  use: (stream: ChatStream) => Effect.Effect<A, E>,
  streamOptions: StreamOptions = passOn,
  options?: Partial<ChatProviderOpenAiOptions>,
  chatRequest: ChatRequest = request
) =>
  ChatProvider.use((provider) => Effect.flatMap(provider.stream(chatTarget, chatRequest, streamOptions), use)).pipe(
    Effect.provide(
      ChatProviderOpenAi.layer({ routerBaseUrl: `${upstream.url()}/api/v1`, ...options }).pipe(
        Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))
      )
    )
  )

/** All of a stream's events, as the pieces it gave and as text. */
const collect = (stream: ChatStream) =>
  Effect.map(Stream.runCollect(stream.events), (pieces) => ({
    pieces: pieces.map((piece) => Buffer.from(piece).toString("utf8")),
    text: Buffer.concat(pieces).toString("utf8")
  }))

describe("ChatProviderOpenAi", () => {
  it.effect("calls the router with a bearer token and returns the upstream's answer", () =>
    Effect.gen(function*() {
      const result = yield* complete(target(), { ...request, temperature: 0.2, max_tokens: 64 })
      const call = seen.at(-1)!
      assert.strictEqual(call.method, "POST")
      assert.strictEqual(call.path, "/api/v1/chat/completions")
      assert.strictEqual(call.headers.authorization, `Bearer ${SECRET}`)
      assert.match(String(call.headers["content-type"]), /^application\/json/)
      assert.deepStrictEqual(call.body, {
        model: "acme/tiny",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }],
        temperature: 0.2,
        max_tokens: 64
      })
      assert.deepStrictEqual(result, {
        // as the upstream sent it, byte for byte
        body: JSON.stringify(completion({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })),
        output: "Bonjour",
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        costUsd: null,
        // Clock-based: the TestClock of it.effect does not move
        latencyMs: 0
      })
    }))

  it.effect("sends neither temperature nor max_tokens when not given, and no model when it is null", () =>
    Effect.gen(function*() {
      yield* complete(target({ modelName: null }))
      assert.deepStrictEqual(seen.at(-1)!.body, {
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }]
      })
    }))

  it.effect("calls the hub's OpenAI-compatible router under /v1", () =>
    Effect.gen(function*() {
      const result = yield* complete(target({ platform: "Hub", modelName: "hub-model" }))
      assert.strictEqual(result.output, "Bonjour")
      const call = seen.at(-1)!
      assert.strictEqual(call.path, "/hub/v1/chat/completions")
      assert.strictEqual(call.headers.authorization, `Bearer ${SECRET}`)
      assert.strictEqual(call.body.model, "hub-model")
    }))

  it.effect("sends no auth header to the router or hub without a token", () =>
    Effect.gen(function*() {
      yield* complete(target({ token: Option.none() }))
      assert.isUndefined(seen.at(-1)!.headers.authorization)
    }))

  it.effect("calls a custom endpoint with each auth type", () =>
    Effect.gen(function*() {
      const custom = (authType: ChatTarget["authType"], authHeaderName: string | null = null) =>
        target({ platform: "Custom", url: `${upstream.url()}/custom/v1//`, authType, authHeaderName })

      yield* complete(custom("bearer"))
      assert.strictEqual(seen.at(-1)!.path, "/custom/v1/chat/completions")
      assert.strictEqual(seen.at(-1)!.headers.authorization, `Bearer ${SECRET}`)

      yield* complete(custom("header", "X-Api-Key"))
      assert.strictEqual(seen.at(-1)!.path, "/custom/v1/chat/completions")
      assert.strictEqual(seen.at(-1)!.headers["x-api-key"], SECRET)
      assert.isUndefined(seen.at(-1)!.headers.authorization)

      yield* complete(custom("none"))
      assert.strictEqual(seen.at(-1)!.path, "/custom/v1/chat/completions")
      assert.isUndefined(seen.at(-1)!.headers.authorization)
      assert.notInclude(JSON.stringify(seen.at(-1)!.headers), SECRET)
    }))

  it.effect("takes the cost from usage.cost when reported", () =>
    Effect.gen(function*() {
      const result = yield* complete(target({ modelName: "cost", inputPricePerMTokens: 1, outputPricePerMTokens: 1 }))
      assert.strictEqual(result.costUsd, 0.0123)
      assert.deepStrictEqual(result.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })
    }))

  it.effect("prices the usage when the upstream reports no cost, and sums a missing total", () =>
    Effect.gen(function*() {
      const result = yield* complete(
        target({ modelName: "no-total", inputPricePerMTokens: 0.15, outputPricePerMTokens: 0.6 })
      )
      assert.deepStrictEqual(result.usage, { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 })
      assert.closeTo(result.costUsd!, 0.00045, 1e-12)
    }))

  it.effect("has no cost without prices or usage, and no output without string content", () =>
    Effect.gen(function*() {
      const unpriced = yield* complete(target({ modelName: "no-total" }))
      assert.isNull(unpriced.costUsd)
      const halfPriced = yield* complete(target({ modelName: "no-total", inputPricePerMTokens: 0.15 }))
      assert.isNull(halfPriced.costUsd)
      const noUsage = yield* complete(
        target({ modelName: "no-usage", inputPricePerMTokens: 0.15, outputPricePerMTokens: 0.6 })
      )
      assert.isNull(noUsage.usage)
      assert.isNull(noUsage.costUsd)
      const noContent = yield* complete(target({ modelName: "no-content" }))
      assert.isNull(noContent.output)
      assert.deepStrictEqual(JSON.parse(noContent.body), {
        ...completion(undefined),
        choices: [{ index: 0, message: { role: "assistant", content: null } }]
      })
    }))

  it.effect("reports an upstream 500 with its message, cut short and without the token", () =>
    Effect.gen(function*() {
      const error = yield* failure(target({ modelName: "boom" }))
      assert.strictEqual(error._tag, "ChatProviderFailed")
      assert.strictEqual(error.candidate_id, "cand-1")
      assert.strictEqual(error.candidate_name, "Tiny")
      assert.strictEqual(error.upstream_status, 500)
      assert.strictEqual(error.latency_ms, 0)
      assert.isTrue(error.reason.startsWith("the router answered 500: Provider failed for key [redacted]: xxx"), error.reason)
      assert.isAtMost(error.reason.length, "the router answered 500: ".length + 300)
      assert.notInclude(error.reason, SECRET)
    }))

  it.effect("reports a 401 with its status and without the token", () =>
    Effect.gen(function*() {
      const error = yield* failure(target({ platform: "Hub", modelName: "unauthorised" }))
      assert.strictEqual(error.upstream_status, 401)
      assert.strictEqual(error.reason, "the hub answered 401: No auth credentials found for [redacted]")
      const custom = yield* failure(
        target({ platform: "Custom", url: upstream.url(), authType: "header", authHeaderName: "x-api-key", modelName: "unauthorised" })
      )
      assert.strictEqual(custom.reason, "the endpoint answered 401: No auth credentials found for [redacted]")
    }))

  it.effect("reports a non-JSON error page by its status alone", () =>
    Effect.gen(function*() {
      const error = yield* failure(target({ modelName: "html" }))
      assert.strictEqual(error.upstream_status, 502)
      assert.strictEqual(error.reason, "the router answered 502")
    }))

  it.effect("does not follow a redirect: a chat completion is a POST the API answers itself", () =>
    Effect.gen(function*() {
      const before = seen.length
      const error = yield* failure(target({ modelName: "moved" }))
      assert.strictEqual(error.reason, "the router answered 307")
      assert.strictEqual(seen.length, before + 1)
    }))

  it.effect("reports an answer that is not JSON or has no choices", () =>
    Effect.gen(function*() {
      const garbled = yield* failure(target({ modelName: "garbled" }))
      assert.strictEqual(garbled.upstream_status, 200)
      assert.strictEqual(garbled.reason, "the router answered with something other than JSON")
      const choiceless = yield* failure(target({ modelName: "no-choices" }))
      assert.strictEqual(choiceless.upstream_status, 200)
      assert.strictEqual(choiceless.reason, "the router answered without choices: Rate limited [redacted]")
    }))

  it.effect("fails without calling out when the platform's upstream.url() URL is not configured", () =>
    Effect.gen(function*() {
      const before = seen.length
      const router = yield* failure(target(), { routerBaseUrl: undefined })
      assert.strictEqual(router.reason, "the router is not configured")
      assert.isNull(router.upstream_status)
      const hub = yield* failure(target({ platform: "Hub" }), { hubBaseUrl: "" })
      assert.strictEqual(hub.reason, "the hub is not configured")
      const custom = yield* failure(target({ platform: "Custom", url: null }))
      assert.strictEqual(custom.reason, "the candidate has no endpoint URL")
      const headerless = yield* failure(target({ platform: "Custom", url: upstream.url(), authType: "header" }))
      assert.strictEqual(headerless.reason, "the candidate uses header auth but names no header")
      assert.strictEqual(seen.length, before)
    }))

  // live: the timeout needs the real clock, not it.effect's TestClock
  it.live("reports a silent upstream as timed out and a refused connection as unreachable", () =>
    Effect.gen(function*() {
      const silent = yield* failure(target({ modelName: "hang" }), { timeout: "300 millis" })
      assert.strictEqual(silent.reason, "the router did not answer within 0.3 s")
      assert.isNull(silent.upstream_status)
      assert.isAtLeast(silent.latency_ms, 250)

      const refused = yield* failure(target({ platform: "Custom", url: "http://127.0.0.1:1/v1" }))
      assert.strictEqual(refused.reason, "could not reach the endpoint")
      assert.isNull(refused.upstream_status)
    }))

  it.live("a completion may take longer than the pool's default deadline, up to the provider's time-out", () =>
    Effect.gen(function*() {
      const result = yield* ChatProvider.use((provider) => provider.complete(target({ modelName: "slow" }), request)).pipe(
        Effect.provide(
          ChatProviderOpenAi.layer({ routerBaseUrl: `${upstream.url()}/api/v1`, timeout: "5 seconds" }).pipe(
            Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true, requestTimeoutMs: 100 }))
          )
        )
      )
      assert.strictEqual(result.output, "Bonjour")
      assert.isAtLeast(result.latencyMs, 350)
    }))

  it.live("measures the wall time of a call", () =>
    Effect.gen(function*() {
      const result = yield* complete(target())
      assert.isAbove(result.latencyMs, 0)
      assert.strictEqual(result.latencyMs, Math.round(result.latencyMs * 10) / 10)
    }))

  it.effect("redacts a key echoed in part or in base64", () =>
    Effect.gen(function*() {
      const failed = yield* failure(target({ modelName: "echo-parts", token: Option.some(Redacted.make("sk-live-0123456789abcdef")) }))
      assert.include(failed.reason, "[redacted]")
      assert.notInclude(failed.reason, "sk-live-")
      assert.notInclude(failed.reason, "abcdef")
      assert.notInclude(failed.reason, Buffer.from("sk-live-0123456789abcdef").toString("base64").slice(8, 20))
    }))

  it.effect("keeps the upstream's bytes for the client and gives storable text for the trace", () =>
    Effect.gen(function*() {
      const result = yield* complete(target({ modelName: "nul" }))
      assert.include(result.body, "a\\u0000b\\ud800c")
      assert.strictEqual(result.output, "a\uFFFDb\uFFFDc")
    }))

  it.effect("a local endpoint refused by the address guard says which setting allows it", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(
        ChatProvider.use((provider) => provider.complete(target({ platform: "Custom", url: `${upstream.url()}/v1` }), request)).pipe(
          Effect.provide(ChatProviderOpenAi.layer({}).pipe(Layer.provide(SafeHttp.layer({ allowPrivateNetwork: false }))))
        )
      )
      assert.include(failed.reason, "is not a public address")
      assert.include(failed.reason, "ALLOW_PRIVATE_NETWORK_TARGETS=true")
    }))

  it.effect("sends the caller's parameters and messages as given, under Podium's own fields", () =>
    Effect.gen(function*() {
      const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }]
      const messages = [
        { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: "data:," } }] },
        { role: "assistant", content: null, tool_calls: toolCalls },
        { role: "tool", tool_call_id: "call_1", content: "sunny", name: "weather" }
      ]
      const parameters = {
        tools,
        tool_choice: "auto",
        seed: 7,
        user: "u-1",
        stop: ["\n\n"],
        max_completion_tokens: 99,
        temperature: 1.5,
        model: "evil",
        messages: [],
        stream: true,
        stream_options: { include_usage: false }
      }
      const responseFormat = { type: "json_schema", json_schema: { name: "x", schema: {} } }
      yield* complete(target(), { messages, parameters, temperature: 0.2, response_format: responseFormat })
      assert.deepStrictEqual(seen.at(-1)!.body, {
        model: "acme/tiny",
        messages,
        tools,
        tool_choice: "auto",
        seed: 7,
        user: "u-1",
        stop: ["\n\n"],
        max_completion_tokens: 99,
        temperature: 0.2,
        response_format: responseFormat
      })


      // a stream sends the same, and always asks for the usage chunk
      yield* streaming(target({ modelName: "stream" }), collect, passOn, {}, { messages, parameters })
      assert.deepStrictEqual(seen.at(-1)!.body, {
        model: "stream",
        messages,
        tools,
        tool_choice: "auto",
        seed: 7,
        user: "u-1",
        stop: ["\n\n"],
        max_completion_tokens: 99,
        temperature: 1.5,
        stream: true,
        stream_options: { include_usage: true }
      })
    }))

  it.effect("records the tool calls as the output of an answer without text", () =>
    Effect.gen(function*() {
      const result = yield* complete(target({ modelName: "tool-calls" }))
      assert.strictEqual(result.output, JSON.stringify(toolCalls))
    }))

  it.effect("streams the upstream's events as they came, whole, and keeps what they said", () =>
    Effect.gen(function*() {
      const { pieces, text } = yield* streaming(target({ modelName: "stream" }), (stream) =>
        Effect.map(collect(stream), (collected) => ({ ...collected, received: stream.received() })).pipe(
          Effect.tap(({ received }) =>
            Effect.sync(() =>
              assert.deepStrictEqual(received, {
                output: "Bonjour é😀",
                usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
                costUsd: null,
                latencyMs: 0,
                error: null
              })
            )
          )
        ))
      assert.strictEqual(text, script)
      for (const piece of pieces) assert.match(piece, /\n\n$/)
      const call = seen.at(-1)!
      assert.strictEqual(call.headers.accept, "text/event-stream")
      assert.deepStrictEqual(call.body, {
        model: "stream",
        messages: request.messages,
        stream: true,
        stream_options: { include_usage: true }
      })
    }))

  it.effect("reads CRLF events, tool-call deltas, and prices the usage when no cost is reported", () =>
    Effect.gen(function*() {
      const crlf = yield* streaming(
        target({ modelName: "stream-crlf", inputPricePerMTokens: 1, outputPricePerMTokens: 2 }),
        (stream) => Effect.map(collect(stream), ({ text }) => ({ text, received: stream.received() }))
      )
      assert.strictEqual(crlf.text, script.replaceAll("\n", "\r\n"))
      assert.strictEqual(crlf.received.output, "Bonjour é😀")
      assert.closeTo(crlf.received.costUsd!, (12 * 1 + 3 * 2) / 1e6, 1e-15)

      const tools = yield* streaming(target({ modelName: "stream-tools" }), (stream) =>
        Effect.map(collect(stream), () => stream.received()))
      assert.deepStrictEqual(JSON.parse(tools.output!), toolCalls)
      assert.isNull(tools.usage)
    }))

  it.effect("without include_usage the caller gets no usage chunk, but the trace keeps the usage", () =>
    Effect.gen(function*() {
      const { received, text } = yield* streaming(
        target({ modelName: "stream" }),
        (stream) => Effect.map(collect(stream), ({ text }) => ({ text, received: stream.received() })),
        { includeUsage: false }
      )
      assert.strictEqual(text, script.replace(usageEvent, ""))
      assert.deepStrictEqual(received.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })
    }))

  it.effect("answers in the name asked for", () =>
    Effect.gen(function*() {
      const { text } = yield* streaming(target({ modelName: "stream" }), collect, { includeUsage: true, answerAs: "podium/best" })
      const data = text.split("\n\n").filter((_) => _.startsWith("data: {")).map((_) => JSON.parse(_.slice(6)))
      assert.strictEqual(data.length, 5)
      for (const chunk of data) assert.strictEqual(chunk.model, "podium/best")
      assert.isTrue(text.endsWith("data: [DONE]\n\n"))
      assert.notInclude(text, "acme/tiny")
    }))

  it.effect("fails the events when the upstream breaks off or ends without [DONE], after passing what came", () =>
    Effect.gen(function*() {
      for (const [modelName, reason] of [["stream-reset", "the router broke off the stream"], ["stream-early", "the router ended the stream early"]]) {
        const passed: Array<string> = []
        const error = yield* streaming(target({ modelName }), (stream) =>
          Stream.runForEach(stream.events, (piece) => Effect.sync(() => passed.push(Buffer.from(piece).toString("utf8"))))
            .pipe(Effect.flip))
        assert.strictEqual(error._tag, "ChatProviderFailed")
        assert.strictEqual(error.reason, reason)
        assert.isNull(error.upstream_status)
        assert.isTrue(passed.join("").startsWith(event(chunk({ content: "Bon" }))), modelName)
      }
    }))

  it.effect("passes the upstream's error event on without the token, and keeps its message", () =>
    Effect.gen(function*() {
      const { received, text } = yield* streaming(
        target({ modelName: "stream-error" }),
        (stream) => Effect.map(collect(stream), ({ text }) => ({ text, received: stream.received() }))
      )
      assert.strictEqual(received.error, "Overloaded for key [redacted]")
      assert.strictEqual(received.output, "Bon")
      assert.include(text, "Overloaded for key [redacted]")
      assert.notInclude(text, SECRET)
    }))

  it.effect("fails before any event as complete does: an error status, or an answer that is not an event stream", () =>
    Effect.gen(function*() {
      const refused = yield* streaming(target({ modelName: "unauthorised" }), collect).pipe(Effect.flip)
      assert.strictEqual(refused.upstream_status, 401)
      assert.strictEqual(refused.reason, "the router answered 401: No auth credentials found for [redacted]")
      const json = yield* streaming(target({ modelName: "no-choices" }), collect).pipe(Effect.flip)
      assert.strictEqual(json.upstream_status, 200)
      assert.strictEqual(json.reason, "the router answered without an event stream: Rate limited [redacted]")
      const refusedConnection = yield* streaming(target({ platform: "Custom", url: "http://127.0.0.1:1/v1" }), collect)
        .pipe(Effect.flip)
      assert.strictEqual(refusedConnection.reason, "could not reach the endpoint")
    }))

  it.live("bounds the wait for the headers and between events, not the whole stream", () =>
    Effect.gen(function*() {
      const options = { timeout: "300 millis" } as const
      const silent = yield* streaming(target({ modelName: "hang" }), collect, passOn, options).pipe(Effect.flip)
      assert.strictEqual(silent.reason, "the router did not answer within 0.3 s")
      const stalled = yield* streaming(target({ modelName: "stream-stall" }), collect, passOn, options).pipe(Effect.flip)
      assert.strictEqual(stalled.reason, "the router sent nothing for 0.3 s")
      assert.isNull(stalled.upstream_status)
      assert.isAtLeast(stalled.latency_ms, 250)
      // 7 events 100 ms apart: longer than the time-out in all
      const slow = yield* streaming(target({ modelName: "stream-slow" }), (stream) =>
        Effect.map(collect(stream), ({ text }) => ({ text, received: stream.received() })), passOn, options)
      assert.strictEqual(slow.text, script)
      assert.isAbove(slow.received.latencyMs, 500)
    }))

  it.live("interrupting the consumer aborts the upstream call", () =>
    Effect.gen(function*() {
      const { aborted, text } = yield* streaming(target({ modelName: "stream-endless" }), (stream) =>
        Effect.gen(function*() {
          const pieces = yield* Stream.runCollect(Stream.take(stream.events, 3))
          // while the pool is still open: the call itself is aborted, not its connection pool
          const aborted = yield* Effect.promise(() => upstreamStream.closed).pipe(Effect.timeout("1 second"))
          return { aborted, text: Buffer.concat(pieces).toString() }
        }))
      assert.isTrue(text.startsWith(event(chunk({ content: "x".repeat(10) }))))
      assert.isTrue(aborted, "the upstream's response closed before it finished")
    }))

  it.live("reads only as fast as the consumer: a slow reader keeps the upstream waiting", () =>
    Effect.gen(function*() {
      const written = yield* streaming(target({ modelName: "stream-big" }), (stream) =>
        Effect.scoped(Effect.gen(function*() {
          const pull = yield* Stream.toPull(stream.events)
          yield* pull
          yield* Effect.sleep("300 millis")
          const early = upstreamStream.written
          yield* Effect.sleep("300 millis")
          return { early, late: upstreamStream.written }
        })).pipe(
          Effect.tap(() => Effect.promise(() => upstreamStream.closed).pipe(Effect.timeout("1 second")))
        ))
      // the kernel's socket buffers and undici's high-water mark, not the 50 MB it would write at once
      assert.isBelow(written.early, 16 * 1024 * 1024)
      assert.strictEqual(written.late, written.early, "nothing more is written while nobody reads")
    }))
})
