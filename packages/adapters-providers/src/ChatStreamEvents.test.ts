import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { ChatStreamEvents, type ChatStreamEventsOptions } from "./ChatStreamEvents.ts"
import { bonjourScript, chunk, event, usageEventOf } from "./testing/ChatChunks.ts"

const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cost: 0.0001 }
const usageEvent = usageEventOf(usage)

const script = bonjourScript(usageEvent)

const options: ChatStreamEventsOptions = { includeUsage: true, scrub: (text) => text.replaceAll("sk-secret", "[redacted]") }
const decode = (parts: ReadonlyArray<Uint8Array>) => Buffer.concat(parts).toString("utf8")

/** Feeds `bytes` cut at `cuts`, and gives what was passed on, piece by piece. */
const feed = (parser: ChatStreamEvents, bytes: Uint8Array, cuts: ReadonlyArray<number> = []) => {
  const out: Array<Uint8Array> = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    const passed = parser.push(bytes.subarray(from, cut))
    if (passed !== undefined) out.push(passed)
    from = cut
  }
  return out
}

const dataOf = (text: string) =>
  text.split(/\r?\n\r?\n/).filter((_) => _.startsWith("data: {")).map((_) => JSON.parse(_.slice(6)) as Record<string, unknown>)

describe("ChatStreamEvents", () => {
  it("passes whole events on as the bytes received, and keeps text, usage and cost", () => {
    const bytes = Buffer.from(script)
    const parser = new ChatStreamEvents(options)
    const passed = parser.push(bytes)!
    assert.strictEqual(passed.buffer, bytes.buffer, "no copy")
    assert.strictEqual(decode([passed]), script)
    assert.isTrue(parser.done)
    assert.strictEqual(parser.output, "Bonjour é😀")
    assert.deepStrictEqual(parser.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })
    assert.strictEqual(parser.reportedCost, 0.0001)
    assert.isNull(parser.error)
  })

  it("gives whole events only, wherever the chunks are cut (in a line, in a UTF-8 character, LF or CRLF)", () => {
    for (const text of [script, script.replaceAll("\n", "\r\n")]) {
      const bytes = Buffer.from(text)
      fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const parser = new ChatStreamEvents(options)
        const out = feed(parser, bytes, cuts.sort((a, b) => a - b))
        assert.strictEqual(decode(out), text)
        for (const piece of out) assert.match(Buffer.from(piece).toString("utf8"), /(\r?\n){2}$/)
        assert.strictEqual(parser.output, "Bonjour é😀")
      }))
      // byte by byte: each character of 😀 and each half of a blank line arrives alone
      const parser = new ChatStreamEvents(options)
      const out = feed(parser, bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))
      assert.strictEqual(decode(out), text)
      assert.strictEqual(out.length, 7)
      assert.strictEqual(parser.output, "Bonjour é😀")
    }
  })

  it("without include_usage, drops the usage chunk and strips usage from the others, keeping it for the trace", () => {
    // OpenAI sends "usage": null in every chunk once usage is asked for
    const text = event(chunk({ content: "Hi" }, { usage: null })) + usageEvent + "data: [DONE]\n\n"
    const parser = new ChatStreamEvents({ ...options, includeUsage: false })
    const passed = decode(feed(parser, Buffer.from(text)))
    assert.strictEqual(passed, event(chunk({ content: "Hi" })) + "data: [DONE]\n\n")
    assert.deepStrictEqual(parser.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })
  })

  it("answers in another name: each event's model is replaced, other lines kept", () => {
    const parser = new ChatStreamEvents({ ...options, answerAs: "podium/best" })
    const passed = decode(feed(parser, Buffer.from(`id: 7\n${script}`)))
    assert.isTrue(passed.startsWith(`id: 7\n: OPENROUTER PROCESSING\n\n`))
    assert.isTrue(passed.endsWith("data: [DONE]\n\n"))
    const data = dataOf(passed)
    assert.strictEqual(data.length, 5)
    for (const chunk of data) assert.strictEqual(chunk.model, "podium/best")
    assert.strictEqual(parser.output, "Bonjour é😀")
  })

  it("assembles tool calls from their deltas when there is no text", () => {
    const call = (index: number, fields: Record<string, unknown>) => event(chunk({ tool_calls: [{ index, ...fields }] }))
    const text = [
      event(chunk({ role: "assistant", content: null })),
      call(0, { id: "call_1", type: "function", function: { name: "weather", arguments: "" } }),
      call(0, { function: { arguments: "{\"city\":" } }),
      call(1, { id: "call_2", type: "function", function: { name: "time", arguments: "{}" } }),
      call(0, { function: { arguments: "\"Paris\"}" } }),
      "data: [DONE]\n\n"
    ].join("")
    const parser = new ChatStreamEvents(options)
    assert.strictEqual(decode(feed(parser, Buffer.from(text), [40, 41, 200])), text)
    assert.deepStrictEqual(JSON.parse(parser.output!), [
      { id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\":\"Paris\"}" } },
      { id: "call_2", type: "function", function: { name: "time", arguments: "{}" } }
    ])
  })

  it("passes an upstream error event on without the token, and keeps its message", () => {
    const error = event({ error: { message: "Overloaded for sk-secret", code: 502 } })
    const parser = new ChatStreamEvents(options)
    const passed = decode(feed(parser, Buffer.from(event(chunk({ content: "Bon" })) + error)))
    assert.strictEqual(passed, event(chunk({ content: "Bon" })) + event({ error: { message: "Overloaded for [redacted]", code: 502 } }))
    assert.strictEqual(parser.error, "Overloaded for [redacted]")
    assert.strictEqual(parser.output, "Bon")
  })

  it("passes nothing after [DONE], and what is not JSON as it came", () => {
    const parser = new ChatStreamEvents(options)
    const text = "data: not json\n\nevent: ping\n\n"
    assert.strictEqual(decode(feed(parser, Buffer.from(`${text}data: [DONE]\n\n${event(chunk({ content: "late" }))}`))), `${text}data: [DONE]\n\n`)
    assert.isNull(parser.output)
    assert.isUndefined(parser.push(Buffer.from(event(chunk({ content: "later" })))))
  })

  it("keeps the text of choice 0 from any chunks, however their JSON is written (read without parsing or parsed)", () => {
    const content = fc.oneof(fc.string(), fc.constantFrom('"usage":{"prompt_tokens":1}', '\\"', '"content":"x"', '"index":1', "é😀\n"))
    const chunkOf = fc.record({
      content: fc.option(content, { nil: undefined }),
      index: fc.constantFrom(0, 1, undefined),
      usage: fc.constantFrom("absent", "null"),
      spaced: fc.boolean(),
      escapedKey: fc.boolean()
    })
    fc.assert(fc.property(fc.array(chunkOf, { maxLength: 6 }), (chunks) => {
      const events = chunks.map(({ content, escapedKey, index, spaced, usage }) => {
        const delta = content === undefined ? {} : { content }
        const body = { ...chunk(delta), choices: [{ ...(index === undefined ? {} : { index }), delta }], ...(usage === "null" ? { usage: null } : {}) }
        const json = JSON.stringify(body, null, spaced ? 1 : undefined).replaceAll("\n", "")
        return `data: ${escapedKey ? json.replace('"model"', '"\\u006dodel"') : json}\n\n`
      })
      const text = [...events, "data: [DONE]\n\n"].join("")
      const parser = new ChatStreamEvents(options)
      assert.strictEqual(decode(feed(parser, Buffer.from(text))), text)
      const expected = chunks.filter((_) => _.index !== 1).map((_) => _.content ?? "").join("")
      assert.strictEqual(parser.output, expected === "" ? null : expected)
      assert.isNull(parser.usage)
    }))
  })

  it("keeps a partial event until its blank line arrives", () => {
    const parser = new ChatStreamEvents(options)
    const text = event(chunk({ content: "Hi" }))
    assert.isUndefined(parser.push(Buffer.from(text.slice(0, -1))))
    assert.strictEqual(decode([parser.push(Buffer.from("\n"))!]), text)
  })
})
