import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { type CallOutcome, type StreamEnd, tracedOutcome } from "./CandidateCalls.ts"
import { nothingReceived, type StreamReceived } from "./ChatProvider.ts"

const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 }
const received: StreamReceived = { output: "Hello there", usage, costUsd: 0.002, latencyMs: 30, error: null }
const streamed = (end: StreamEnd, got: StreamReceived = received) => tracedOutcome({ _tag: "Streamed", received: got, end })

describe("tracedOutcome", () => {
  it("a whole answer is a success with its output, usage, cost and latency", () => {
    const outcome: CallOutcome = Result.succeed({ body: "{}", output: "hi", usage, costUsd: 0.001, latencyMs: 40 })
    expect(tracedOutcome(outcome)).toEqual({ status: "success", output: "hi", error: null, latency_ms: 40, usage, cost_usd: 0.001 })
  })

  it("a failure is an error with its reason and latency, nothing else", () => {
    const outcome: CallOutcome = Result.fail({ reason: "vendor answered 503", latency_ms: 12 })
    expect(tracedOutcome(outcome)).toEqual({ status: "error", output: null, error: "vendor answered 503", latency_ms: 12, usage: null, cost_usd: null })
  })

  it("a stream that ended is a success with what arrived", () => {
    expect(streamed({ _tag: "Ended" })).toEqual({ status: "success", output: "Hello there", error: null, latency_ms: 30, usage, cost_usd: 0.002 })
  })

  it("a stream that failed mid-way is an error with its reason and what arrived before", () => {
    const partial = { ...received, output: "Hel", usage: null, costUsd: null }
    expect(streamed({ _tag: "Failed", reason: "connection reset" }, partial))
      .toEqual({ status: "error", output: "Hel", error: "connection reset", latency_ms: 30, usage: null, cost_usd: null })
  })

  it("a stream the caller left is cancelled with what arrived; never run, with nothing", () => {
    expect(streamed({ _tag: "Cancelled" }, { ...received, output: "Hel" })).toMatchObject({ status: "cancelled", output: "Hel", error: null })
    expect(streamed({ _tag: "Cancelled" }, nothingReceived(0)))
      .toEqual({ status: "cancelled", output: null, error: null, latency_ms: 0, usage: null, cost_usd: null })
  })

  it("an upstream's own error event makes an ended stream an error, with the event's message", () => {
    const errored = { ...received, output: null, usage: null, costUsd: null, error: "The server had an error" }
    expect(streamed({ _tag: "Ended" }, errored)).toMatchObject({ status: "error", error: "The server had an error" })
    // a failure's own reason wins; a cancelled stream stays cancelled
    expect(streamed({ _tag: "Failed", reason: "reset" }, errored)).toMatchObject({ status: "error", error: "reset" })
    expect(streamed({ _tag: "Cancelled" }, errored)).toMatchObject({ status: "cancelled", error: "The server had an error" })
  })

  it("usage is copied, not shared", () => {
    const traced = streamed({ _tag: "Ended" })
    expect(traced.usage).toEqual(usage)
    expect(traced.usage).not.toBe(usage)
  })
})
