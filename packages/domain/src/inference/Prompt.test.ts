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
