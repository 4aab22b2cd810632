import type { Tracer } from "effect"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, apiToken, type NewLeaderboard, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { deployedModel, routerWithFewShotModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { serverSpans } from "./support/Spans.ts"

// The whole OpenAI chat-completions request on the serving path (issue 30), sent with the official
// `openai` package: every parameter but `model`, `stream` and `stream_options` reaches the upstream
// as sent, messages in OpenAI's shapes (tool calls, tool turns, parts with images) pass through, and
// the answer comes back byte for byte, streamed and not, at the front door and at the router.

const routerKey = "sk-or-v1-openai-request-router"
let fake: ModelFake
let podium: Podium
let owner: SignedIn
let leaderboardToken: string
let modelToken: string
const spans: Array<Tracer.Span> = []

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  routerWithFewShotModel(fake)
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1` }, { tracing: serverSpans(spans) })
  owner = await signedIn(podium, "openai-request-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
  leaderboardToken = await apiToken(owner.api, ["leaderboards:inference"])
  modelToken = await apiToken(owner.api, ["models:inference"])
}, 60_000)
afterAll(async () => {
  await podium?.stop()
  await fake?.close()
})

/**
 * The two transports: the front door takes a request with a Content-Length JSON body; a chunked
 * body (no Content-Length) is declined there and answered by the HttpApi router.
 */
const chunkedFetch: typeof fetch = (input, init) =>
  typeof init?.body === "string"
    ? fetch(input, { ...init, body: new Blob([init.body]).stream(), duplex: "half" } as RequestInit)
    : fetch(input, init)
const transports = [
  { transport: "front door", fetch: globalThis.fetch, frontDoor: true },
  { transport: "router", fetch: chunkedFetch, frontDoor: false }
] as const

let models = 0
/** A leaderboard served by a Custom candidate at the fake under a model name of its own, answered by `answer`. */
const leaderboardAnswering = async (answer: (question: string, body: any) => Answer, leaderboard: Partial<NewLeaderboard> = {}) => {
  const model = `model-${++models}`
  fake.models[model] = answer
  const { id } = await servingLeaderboard(owner.api, aCandidate(`${fake.url}/v1`, { name: model, model_name: model }), aLeaderboard(leaderboard))
  return { id, model }
}
const openai = (baseURL: string, fetch: typeof globalThis.fetch, apiKey = leaderboardToken) =>
  new OpenAI({ baseURL, apiKey, fetch, maxRetries: 0 })
const chats = () => fake.seen.filter((s) => s.path.endsWith("/chat/completions"))

const tools: Array<OpenAI.Chat.Completions.ChatCompletionTool> = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}]
const toolCall = { id: "call_1", type: "function" as const, function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }
/** The completion that asks for the tool, as an upstream sends it. */
const askingForTool = (model: string) => ({
  id: "chatcmpl-tools",
  object: "chat.completion",
  created: 1_790_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [toolCall] }, finish_reason: "tool_calls" }],
  usage: { prompt_tokens: 80, completion_tokens: 12, total_tokens: 92 }
})
const image = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

/** Streams the answer with the package's iterator: the text, the tool calls' deltas and the chunks. */
const streamed = async (stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) => {
  let text = ""
  const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
  const calls: Array<{ id?: string; name?: string; arguments: string }> = []
  for await (const chunk of stream) {
    chunks.push(chunk)
    const delta = chunk.choices[0]?.delta
    text += delta?.content ?? ""
    for (const call of delta?.tool_calls ?? []) {
      const into = calls[call.index] ??= { arguments: "" }
      if (call.id !== undefined) into.id = call.id
      if (call.function?.name !== undefined) into.name = call.function.name
      into.arguments += call.function?.arguments ?? ""
    }
  }
  return { text, chunks, calls }
}

describe.each(transports)("the whole OpenAI request, at the $transport", ({ fetch, frontDoor, transport }) => {
  it("is served by this transport", async () => {
    const { id, model } = await leaderboardAnswering(() => "hello")
    const before = spans.filter((s) => s.attributes.get("podium.front_door") === true).length
    const answer = await openai(`${podium.url}/v1/leaderboard/${id}`, fetch).chat.completions.create({
      model: "ignored",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(answer.choices[0]!.message.content).toBe("hello")
    expect(chats().at(-1)!.body.model).toBe(model)
    const after = spans.filter((s) => s.attributes.get("podium.front_door") === true).length
    expect(after - before, transport).toBe(frontDoor ? 1 : 0)
  })

  it("a function-calling round trip, not streamed: tools, tool_choice and the turns go as sent; the answers come back byte for byte", async () => {
    const { id, model } = await leaderboardAnswering((_, body) =>
      body.messages.some((m: any) => m.role === "tool") ? "It is 18°C in Paris." : { json: askingForTool(body.model) }
    )
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const first = {
      model: "gpt-4o",
      messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
      tools,
      tool_choice: "auto" as const,
      parallel_tool_calls: false,
      temperature: 0
    }
    const asked = await client.chat.completions.create(first).asResponse()
    expect(asked.status).toBe(200)
    const askedText = await asked.text()
    expect(askedText).toBe(fake.sent.at(-1)) // byte for byte
    const { model: _, ...firstSent } = first
    expect(chats().at(-1)!.body).toEqual({ ...firstSent, model })
    const call = JSON.parse(askedText).choices[0]
    expect(call).toMatchObject({ finish_reason: "tool_calls", message: { content: null, tool_calls: [toolCall] } })

    const second = {
      model: "gpt-4o",
      messages: [
        ...first.messages,
        { role: "assistant" as const, content: null, tool_calls: [toolCall] },
        { role: "tool" as const, tool_call_id: "call_1", content: "{\"temperature_c\":18}" }
      ],
      tools,
      tool_choice: { type: "function" as const, function: { name: "get_weather" } }
    }
    const answered = await client.chat.completions.create(second).asResponse()
    expect(await answered.text()).toBe(fake.sent.at(-1))
    const { model: __, ...secondSent } = second
    expect(chats().at(-1)!.body).toEqual({ ...secondSent, model })
  })

  it("a function-calling round trip, streamed: the tool call's deltas and the text assemble as the upstream sent them", async () => {
    const { id, model } = await leaderboardAnswering((_, body) =>
      body.messages.some((m: any) => m.role === "tool")
        ? { stream: { deltas: ["It is ", "18°C ", "in Paris."] } }
        : {
          stream: {
            toolCalls: [
              { index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } },
              { index: 0, function: { arguments: "{\"city\":" } },
              { index: 0, function: { arguments: "\"Paris\"}" } }
            ]
          }
        }
    )
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const first = {
      model: "gpt-4o",
      messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
      tools,
      tool_choice: "required" as const
    }
    const asked = await streamed(await client.chat.completions.create({ ...first, stream: true }))
    expect(asked.text).toBe("")
    expect(asked.calls).toEqual([{ id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }])
    expect(asked.chunks.at(-1)!.choices[0]?.finish_reason).toBe("tool_calls")
    const { model: _, ...firstSent } = first
    expect(chats().at(-1)!.body).toEqual({ ...firstSent, model, stream: true, stream_options: { include_usage: true } })

    const second = {
      model: "gpt-4o",
      messages: [
        ...first.messages,
        { role: "assistant" as const, content: null, tool_calls: [toolCall] },
        { role: "tool" as const, tool_call_id: "call_1", content: "{\"temperature_c\":18}" }
      ],
      tools
    }
    // the package's helper assembles the same
    const final = await client.chat.completions.stream(second).finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe("It is 18°C in Paris.")
    expect(fake.streams.at(-1)!.text).toBe("It is 18°C in Paris.")
    const { model: __, ...secondSent } = second
    expect(chats().at(-1)!.body).toEqual({ ...secondSent, model, stream: true, stream_options: { include_usage: true } })
  })

  it("JSON mode and the other parameters are forwarded as sent, streamed and not", async () => {
    const { id, model } = await leaderboardAnswering((_, body) =>
      body.stream === true ? { stream: { deltas: ["{\"answer\"", ": 42}"] } } : "{\"answer\": 42}"
    )
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const request = {
      model: "gpt-4o",
      messages: [{ role: "system" as const, content: "Answer in JSON." }, { role: "user" as const, content: "The answer?" }],
      response_format: { type: "json_object" as const },
      top_p: 0.9,
      stop: ["\n\n"],
      seed: 7,
      user: "user-1234",
      logprobs: true,
      top_logprobs: 2,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      max_completion_tokens: 100,
      n: 1,
      metadata: { purpose: "test" }
    }
    const { model: _, ...sent } = request
    const whole = await client.chat.completions.create(request).asResponse()
    const text = await whole.text()
    expect(text).toBe(fake.sent.at(-1))
    expect(JSON.parse(JSON.parse(text).choices[0].message.content)).toEqual({ answer: 42 })
    expect(chats().at(-1)!.body).toEqual({ ...sent, model })

    const stream = await streamed(await client.chat.completions.create({ ...request, stream: true }))
    expect(JSON.parse(stream.text)).toEqual({ answer: 42 })
    expect(stream.text).toBe(fake.streams.at(-1)!.text)
    expect(chats().at(-1)!.body).toEqual({ ...sent, model, stream: true, stream_options: { include_usage: true } })
  })

  it("an image part goes unchanged, streamed and not", async () => {
    const { id, model } = await leaderboardAnswering((_, body) => body.stream === true ? { stream: { deltas: ["A red ", "pixel."] } } : "A red pixel.")
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const messages = [{
      role: "user" as const,
      name: "alice",
      content: [
        { type: "text" as const, text: "What is in this image?" },
        { type: "image_url" as const, image_url: { url: image, detail: "low" as const } }
      ]
    }]
    const whole = await client.chat.completions.create({ model: "gpt-4o", messages }).asResponse()
    expect(await whole.text()).toBe(fake.sent.at(-1))
    expect(chats().at(-1)!.body).toEqual({ model, messages })

    const stream = await streamed(await client.chat.completions.create({ model: "gpt-4o", messages, stream: true }))
    expect(stream.text).toBe("A red pixel.")
    expect(chats().at(-1)!.body).toEqual({ model, messages, stream: true, stream_options: { include_usage: true } })
  })

  it("the leaderboard's prompts apply to parts: the system prompt leads, the model prompt templates the last text part", async () => {
    const { id } = await leaderboardAnswering(() => "ok", { system_prompt: "Be brief.", model_prompt: "Customer asks: {input}" })
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const parts = [
      { type: "text" as const, text: "Look at this." },
      { type: "image_url" as const, image_url: { url: image } },
      { type: "text" as const, text: "What colour is it?" }
    ]
    await client.chat.completions.create({ model: "x", messages: [{ role: "user", content: parts }] })
    expect(chats().at(-1)!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [parts[0], parts[1], { type: "text", text: "Customer asks: What colour is it?" }] }
    ])
    // a caller's own system message wins
    await client.chat.completions.create({
      model: "x",
      messages: [{ role: "system", content: "Be long." }, { role: "user", content: "Why?" }]
    })
    expect(chats().at(-1)!.body.messages).toEqual([{ role: "system", content: "Be long." }, { role: "user", content: "Customer asks: Why?" }])
  })

  it("Podium's own input fields still become the user's message beside OpenAI's parameters", async () => {
    const { id, model } = await leaderboardAnswering(() => "ok")
    const reply = await fetch(`${podium.url}/v1/leaderboard/${id}/inference`, {
      method: "POST",
      headers: { authorization: `Bearer ${leaderboardToken}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "Where is my parcel?", seed: 3, response_format: { type: "json_object" }, model: "mine" })
    })
    expect(reply.status).toBe(200)
    expect(await reply.text()).toBe(fake.sent.at(-1))
    expect(chats().at(-1)!.body).toEqual({
      model,
      messages: [{ role: "user", content: "Where is my parcel?" }],
      seed: 3,
      response_format: { type: "json_object" }
    })
  })
})

describe("the whole OpenAI request on model inference", () => {
  let modelId: string

  beforeAll(async () => {
    ;({ modelId } = await deployedModel(podium, owner, "few_shot"))
  }, 60_000)

  it.each(transports)("at the $transport: parameters and parts are forwarded, the answer is in the model's name, streamed and not", async ({ fetch }) => {
    const answer = fake.models["acme/small"]!
    fake.models["acme/small"] = (_, body) => body.stream === true ? { stream: { deltas: ["{\"colour\"", ": \"red\"}"] } } : "{\"colour\": \"red\"}"
    try {
      const client = openai(`${podium.url}/v1/models/${modelId}`, fetch, modelToken)
      const messages = [{
        role: "user" as const,
        content: [{ type: "text" as const, text: "Which colour?" }, { type: "image_url" as const, image_url: { url: image } }]
      }]
      const request = { model: "x", messages, response_format: { type: "json_object" as const }, tools, seed: 11, max_tokens: 64 }
      const whole = await client.chat.completions.create(request).asResponse()
      const text = await whole.text()
      // model inference rewrites only `model`, to the Podium model's name
      expect(JSON.parse(text)).toEqual({ ...JSON.parse(fake.sent.at(-1)!), model: "few_shot model" })
      expect(whole.headers.get("x-service-model-id")).toBe(modelId)
      const sent = chats().at(-1)!.body
      expect(sent).toMatchObject({ model: "acme/small", response_format: { type: "json_object" }, tools, seed: 11, max_tokens: 64 })
      expect(sent.messages.at(-1)).toEqual(messages[0])

      const stream = await streamed(await client.chat.completions.create({ ...request, stream: true }))
      expect(JSON.parse(stream.text)).toEqual({ colour: "red" })
      for (const chunk of stream.chunks) expect(chunk.model).toBe("few_shot model")
      expect(chats().at(-1)!.body).toMatchObject({ model: "acme/small", tools, seed: 11, stream: true, stream_options: { include_usage: true } })
      expect(chats().at(-1)!.body.messages.at(-1)).toEqual(messages[0])
    } finally {
      fake.models["acme/small"] = answer
    }
  })
})
