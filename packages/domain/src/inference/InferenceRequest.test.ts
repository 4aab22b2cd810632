import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cappedParameters, forwardedParameters, InferenceRequest, requestedMaxTokens } from "./InferenceRequest.ts"

/** What Podium reads itself, and only that: never forwarded. */
const readByPodium = ["model", "messages", "input", "prompt", "question", "query", "stream", "stream_options"]

describe("InferenceRequest", () => {
  it("accepts OpenAI's whole request: parts content, a null-content tool_calls turn, a tool turn, any other parameter", () => {
    const request = {
      model: "gpt-4o",
      messages: [
        { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "42" },
        { role: "assistant", name: "helper" }
      ],
      tools: [{ type: "function", function: { name: "f", parameters: {} } }],
      response_format: { type: "json_object" },
      max_completion_tokens: 100,
      n: 2,
      stream: true,
      stream_options: { include_usage: true, extra: 1 }
    }
    expect(Schema.decodeUnknownSync(InferenceRequest)(request)).toEqual(request)
  })

  it("still refuses what the interface refuses: a message without a role, a content of another type, max_tokens below 1", () => {
    for (const bad of [{ messages: [{ content: "hi" }] }, { messages: [{ role: "user", content: 7 }] }, { input: "hi", max_tokens: 0 }, { input: "hi", n: 0 }]) {
      expect(Result.isFailure(Schema.decodeUnknownResult(InferenceRequest)(bad)), JSON.stringify(bad)).toBe(true)
    }
  })
})

describe("forwardedParameters", () => {
  it("drops exactly what Podium reads itself and keeps every other parameter as given (the same values)", () => {
    const tools = [{ type: "function", function: { name: "lookup" } }]
    const request: InferenceRequest = {
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
      input: "a",
      prompt: "b",
      question: "c",
      query: "d",
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 10,
      max_completion_tokens: 20,
      n: 2,
      tools,
      tool_choice: "auto",
      top_p: 0.5,
      stop: null,
      seed: 0,
      user: "u",
      logprobs: false
    }
    const forwarded = forwardedParameters(request)
    expect(forwarded).toEqual({
      temperature: 0.2,
      max_tokens: 10,
      max_completion_tokens: 20,
      n: 2,
      tools,
      tool_choice: "auto",
      top_p: 0.5,
      stop: null,
      seed: 0,
      user: "u",
      logprobs: false
    })
    expect(forwarded.tools).toBe(tools)
    expect(forwardedParameters({ input: "hi" })).toEqual({})
  })

  it("forwards a __proto__ key as the property it is, lending nothing to the rest", () => {
    const given = JSON.parse("{\"__proto__\": {\"max_completion_tokens\": 5}, \"seed\": 1}") as InferenceRequest
    const forwarded = forwardedParameters(given)
    expect(Object.keys(forwarded).sort()).toEqual(["__proto__", "seed"])
    expect(forwarded.max_completion_tokens).toBeUndefined()
    expect(JSON.stringify(forwarded)).toBe("{\"__proto__\":{\"max_completion_tokens\":5},\"seed\":1}")
  })

  it("for any request: every key but Podium's own is forwarded with its value", () => {
    const key = fc.oneof(fc.constantFrom(...readByPodium), fc.string({ minLength: 1, maxLength: 12 }))
    fc.assert(fc.property(fc.dictionary(key, fc.jsonValue()), (given) => {
      const forwarded = forwardedParameters(given as InferenceRequest)
      expect(Object.keys(forwarded).sort()).toEqual(Object.keys(given).filter((k) => !readByPodium.includes(k)).sort())
      for (const k of Object.keys(forwarded)) expect(forwarded[k]).toBe(given[k])
    }))
  })
})

describe("requestedMaxTokens", () => {
  it("is max_completion_tokens, else max_tokens, else undefined", () => {
    expect(requestedMaxTokens({ input: "hi", max_completion_tokens: 5, max_tokens: 9 })).toBe(5)
    expect(requestedMaxTokens({ input: "hi", max_tokens: 9 })).toBe(9)
    expect(requestedMaxTokens({ input: "hi" })).toBeUndefined()
  })
})

describe("cappedParameters", () => {
  const others = { temperature: 0.2, tools: [] }

  it("caps under max_tokens when the caller sent that, or neither", () => {
    expect(cappedParameters({ ...others, max_tokens: 900 }, 50)).toEqual({ ...others, max_tokens: 50 })
    expect(cappedParameters(others, 50)).toEqual({ ...others, max_tokens: 50 })
    expect(cappedParameters({}, 50)).toEqual({ max_tokens: 50 })
  })

  it("caps under max_completion_tokens alone when the caller sent that alone, and under both when it sent both", () => {
    expect(cappedParameters({ ...others, max_completion_tokens: 900 }, 50)).toEqual({ ...others, max_completion_tokens: 50 })
    expect(cappedParameters({ ...others, max_completion_tokens: 900, max_tokens: 800 }, 50))
      .toEqual({ ...others, max_completion_tokens: 50, max_tokens: 50 })
  })

  it("leaves the parameters given untouched", () => {
    const given = { max_tokens: 900 }
    cappedParameters(given, 50)
    expect(given).toEqual({ max_tokens: 900 })
  })
})
