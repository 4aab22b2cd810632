import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { buildMessages, type PromptInput, requestMessages } from "./Prompt.ts"

const text = fc.string({ maxLength: 8 })
const message = fc.record({ role: fc.constantFrom("system", "user", "assistant"), content: text })
const request: fc.Arbitrary<PromptInput> = fc.record({
  input: text,
  prompt: text,
  question: text,
  query: text,
  messages: fc.array(message, { maxLength: 3 })
}, { requiredKeys: [] })

describe("requestMessages", () => {
  it("takes non-empty messages over the text fields, else exactly one text field as the user's message", () => {
    const messages = [{ role: "user", content: "from messages" }]
    expect(Result.getOrThrow(requestMessages({ messages, input: "a", query: "b" }))).toEqual({ input: "from messages", messages })
    for (const field of ["input", "prompt", "question", "query"] as const) {
      expect(Result.getOrThrow(requestMessages({ messages: [], [field]: "q7" }))).toEqual({
        input: "q7",
        messages: [{ role: "user", content: "q7" }]
      })
    }
  })

  it("refuses no input, and two text fields without messages, naming where", () => {
    for (const [given, path] of [[{}, ["messages"]], [{ messages: [] }, ["messages"]], [{ input: "a", prompt: "b" }, ["prompt"]]] as const) {
      const refused = requestMessages(given)
      expect(Result.isFailure(refused) && refused.failure).toMatchObject({ _tag: "InvalidInput", path })
    }
  })

  it("is what a leaderboard sends when its challenge adds nothing, for any request", () => {
    fc.assert(fc.property(request, (given) => {
      expect(buildMessages(given, { system_prompt: null, model_prompt: null })).toEqual(requestMessages(given))
    }))
  })
})

describe("buildMessages with OpenAI's message shapes", () => {
  const image = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }
  const challenge = { system_prompt: "Be brief.", model_prompt: "Answer: {input}" }

  it("applies the template to the last text part of a parts message, keeping the other parts in place", () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "first" }, image, { type: "text", text: "What is this?" }] }]
    expect(Result.getOrThrow(buildMessages({ messages }, challenge))).toEqual({
      input: "first\nWhat is this?",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "first" }, image, { type: "text", text: "Answer: What is this?" }] }
      ]
    })
    // without the placeholder the text follows the template after a blank line
    const appended = buildMessages({ messages }, { system_prompt: null, model_prompt: "Context." })
    expect(Result.getOrThrow(appended).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "first" }, image, { type: "text", text: "Context.\n\nWhat is this?" }] }
    ])
  })

  it("adds a text part after the others when a parts message has none", () => {
    const messages = [{ role: "user", content: [image] }]
    expect(Result.getOrThrow(buildMessages({ messages }, challenge))).toEqual({
      input: "",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [image, { type: "text", text: "Answer: " }] }]
    })
  })

  it("templates only the last user message, keeps every other property (tool_calls, tool_call_id, name), and the caller's system message", () => {
    const toolCalls = [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }]
    const messages = [
      { role: "system", content: "Mine." },
      { role: "user", content: "earlier", name: "ann" },
      { role: "assistant", content: null, tool_calls: toolCalls },
      { role: "tool", tool_call_id: "c1", content: "42" },
      { role: "user", content: "later", name: "ann" }
    ]
    expect(Result.getOrThrow(buildMessages({ messages }, challenge))).toEqual({
      input: "later",
      messages: [...messages.slice(0, 4), { role: "user", content: "Answer: later", name: "ann" }]
    })
  })

  it("leaves the messages as given without a template, and with an empty one; the system prompt still leads", () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "hi" }, image], name: "ann" }]
    for (const model_prompt of [null, ""]) {
      const built = Result.getOrThrow(buildMessages({ messages }, { system_prompt: "Be brief.", model_prompt }))
      expect(built.messages).toEqual([{ role: "system", content: "Be brief." }, ...messages])
      expect(built.messages[1]).toBe(messages[0])
    }
  })

  it("a user message with null content is left alone; the template goes nowhere else", () => {
    const messages = [{ role: "user", content: "q" }, { role: "user", content: null }]
    expect(Result.getOrThrow(buildMessages({ messages }, { system_prompt: null, model_prompt: "T {input}" })).messages).toEqual(messages)
  })
})

describe("requestMessages with parts", () => {
  it("takes the input from the last user message's text parts, else the last message's; none is an empty input", () => {
    const image = { type: "image_url", image_url: { url: "https://example.com/a.png" } }
    const parts = [{ type: "text", text: "a" }, image, { type: "text", text: "b" }]
    expect(Result.getOrThrow(requestMessages({ messages: [{ role: "user", content: parts }, { role: "assistant", content: "x" }] })).input)
      .toBe("a\nb")
    expect(Result.getOrThrow(requestMessages({ messages: [{ role: "assistant", content: [{ type: "text", text: "only" }] }] })).input).toBe("only")
    expect(Result.getOrThrow(requestMessages({ messages: [{ role: "user", content: [image] }] })).input).toBe("")
    expect(Result.getOrThrow(requestMessages({ messages: [{ role: "assistant", content: null, tool_calls: [] }] })).input).toBe("")
  })
})
