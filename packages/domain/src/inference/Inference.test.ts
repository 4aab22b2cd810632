import { DateTime, Deferred, Duration, Effect, Fiber, Layer, type Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { ApiToken, boundCall, BudgetLedger, type Principal as PrincipalType, Principal } from "../access/index.ts"
import { BudgetLedgerMemory } from "../access/memory.ts"
import { IntegrationRepository } from "../integrations/index.ts"
import {
  Candidate,
  CandidateId,
  LeaderboardId,
  LeaderboardRepository,
  Leaderboards,
  ModelDirectory
} from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "../leaderboards/memory.ts"
import { TokenId } from "../shared/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import { IdGeneratorInOrder, SecretCipherSealing, ServiceModelsEmpty, uuid, workspaceOwner } from "../testing/index.ts"
import { CallBudgets, streamLifetime } from "./CallBudgets.ts"
import { CandidateCalls } from "./CandidateCalls.ts"
import { ChatProvider, ChatProviderFailed, type ChatRequest, type ChatTarget, type StreamOptions } from "./ChatProvider.ts"
import { ChatTargets } from "./ChatTargets.ts"
import { Inference, servingCandidate } from "./Inference.ts"
import type { InferenceRequest } from "./InferenceRequest.ts"
import { PriceCatalogue } from "./PriceCatalogue.ts"
import type { Trace } from "./Trace.ts"
import { TraceWriter } from "./TraceWriter.ts"

// Inference.infer over the memory repositories and the real CandidateCalls, ChatTargets and
// CallBudgets (on the memory budget ledger). The ports around it are fakes that keep what they are
// given: an upstream that answers every candidate but "down" (it prices what it reports no cost for
// at the target's prices, as ChatProviderOpenAi does), a router catalogue that lists vendor/cheap,
// a trace writer that keeps the traces; every model exists, none is deployed (ServiceModelsEmpty).
// Streamed, the upstream sends `streamedTexts` as events ("breaks" then fails, "stalls" then waits
// for ever) and counts the streams it had to abort or close; the memory ledger's settlements are kept.

const owner = workspaceOwner(1)
const stranger = workspaceOwner(2)
const workspace = WorkspaceId.make(uuid(1))
const now = "2026-11-22T10:00:00.000Z"

/** An API token of `owner`'s workspace, with this budget (USD a day). */
const token = (budget_limit: number | null) =>
  Principal.ApiTokenPrincipal({
    token: new ApiToken({
      id: TokenId.make(uuid(50)),
      workspace_id: workspace,
      name: "production",
      display_prefix: "pod_abcd",
      scopes: ["leaderboards:inference"],
      expires_at: null,
      budget_limit,
      budget_reset_interval: budget_limit === null ? null : "daily",
      created_by: null,
      created_at: DateTime.makeUnsafe(0),
      last_used_at: null,
      revoked_at: null
    })
  })

const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }
const bodyOf = (name: string) => JSON.stringify({ choices: [{ message: { role: "assistant", content: `${name} says hi` } }], usage })

/** What a streamed answer's deltas say, one event each; the usage comes in a last event. */
const streamedTexts = ["Hel", "lo ", "there"]
const encoder = new TextEncoder()
const eventOf = (text: string) => encoder.encode(`data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`)

/** A fresh world: the use case, what the upstream was asked and the traces written. */
const world = () => {
  const asked: Array<{ readonly target: ChatTarget; readonly request: ChatRequest; readonly options?: StreamOptions }> = []
  const traces: Array<Trace> = []
  const settled: Array<{ readonly reservation: string; readonly cost: number | null }> = []
  /** Every event the upstream sent, and how many of its streams were closed (ended, aborted or never run). */
  const sent: Array<Uint8Array> = []
  const closed = { streams: 0 }
  const down = (target: ChatTarget) =>
    new ChatProviderFailed({
      candidate_id: target.candidateId,
      candidate_name: target.candidateName,
      reason: "vendor/down answered 503",
      upstream_status: 503,
      latency_ms: 12
    })
  const costOf = (target: ChatTarget) => {
    const { inputPricePerMTokens: input, outputPricePerMTokens: output } = target
    return input === null || output === null ? null : (usage.prompt_tokens * input + usage.completion_tokens * output) / 1e6
  }
  const upstream = ChatProvider.of({
    complete: (target, request) =>
      Effect.suspend(() => {
        asked.push({ target, request })
        if (target.candidateName === "down") return Effect.fail(down(target))
        return Effect.succeed({
          body: bodyOf(target.candidateName),
          output: `${target.candidateName} says hi`,
          usage,
          costUsd: costOf(target),
          latencyMs: 40
        })
      }),
    stream: (target, request, options) =>
      Effect.gen(function*() {
        asked.push({ target, request, options })
        if (target.candidateName === "down") return yield* down(target)
        yield* Effect.addFinalizer(() => Effect.sync(() => void closed.streams++))
        let output: string | null = null
        let ended = false
        const texts = target.candidateName === "breaks" || target.candidateName === "stalls" ? streamedTexts.slice(0, 2) : streamedTexts
        // one event a pull, as an upstream's arrive
        const deltas = Stream.fromIterable(texts).pipe(Stream.rechunk(1), Stream.map((text) => {
          const event = eventOf(text)
          sent.push(event)
          output = (output ?? "") + text
          return event
        }))
        const rest = target.candidateName === "breaks"
          ? Stream.fail(new ChatProviderFailed({
            candidate_id: target.candidateId,
            candidate_name: target.candidateName,
            reason: "vendor/breaks: connection reset",
            upstream_status: null,
            latency_ms: 25
          }))
          : target.candidateName === "stalls"
          ? Stream.never
          : Stream.fromEffect(Effect.sync(() => {
            ended = true
            const event = encoder.encode(`data: ${JSON.stringify({ choices: [], usage })}\n\ndata: [DONE]\n\n`)
            sent.push(event)
            return event
          }))
        return {
          events: Stream.concat(deltas, rest),
          received: () => ({ output, usage: ended ? usage : null, costUsd: ended ? costOf(target) : null, latencyMs: 30, error: null })
        }
      })
  })
  const catalogue = PriceCatalogue.of({
    routerPrices: (model) => Effect.succeed(model === "vendor/cheap" ? { input: 1, output: 2 } : { input: null, output: null })
  })
  const ports = Layer.mergeAll(
    Layer.succeed(ChatProvider, upstream),
    Layer.succeed(PriceCatalogue, catalogue),
    Layer.succeed(TraceWriter, TraceWriter.of({ record: (trace) => Effect.sync(() => void traces.push(trace)), flush: Effect.void })),
    Layer.succeed(IntegrationRepository, IntegrationRepository.of({
  save: () => Effect.void,
  find: () => Effect.succeedNone,
  list: () => Effect.succeed([]),
  remove: () => Effect.succeed(false)
})),
    Layer.succeed(ModelDirectory, ModelDirectory.of({ exists: () => Effect.succeed(true) })),
    ServiceModelsEmpty.layer,
    IdGeneratorInOrder.layer,
    SecretCipherSealing.layer,
    LeaderboardRepositoryMemory.layer,
    ServingHistoryMemory.layer,
    // the memory ledger, keeping what each reservation was settled at
    Layer.effect(
      BudgetLedger,
      Effect.map(BudgetLedger, (ledger) =>
        BudgetLedger.of({
          ...ledger,
          settle: (reservation, cost) => Effect.andThen(Effect.sync(() => void settled.push({ reservation, cost })), ledger.settle(reservation, cost))
        }))
    ).pipe(Layer.provide(BudgetLedgerMemory.layer))
  )
  const layer = Inference.layer.pipe(
    Layer.provide(CandidateCalls.layer),
    Layer.provide(Layer.mergeAll(ChatTargets.layer, CallBudgets.layer)),
    Layer.provideMerge(Leaderboards.layer),
    Layer.provideMerge(ports),
    Layer.provideMerge(TestClock.layer())
  )
  /** Runs `effect` in a scope of its own (a request's), closed when it is done. */
  const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer> | Scope.Scope>) =>
    Effect.runPromise(Effect.provide(
      Effect.scoped(Effect.andThen(TestClock.setTime(Date.parse(now)), effect)),
      layer
    ))
  return { asked, traces, settled, sent, closed, run }
}

/** A leaderboard of `owner`, with its candidates (Router unless said otherwise). */
const leaderboardWith = (...candidates: ReadonlyArray<{ readonly name: string; readonly model_name?: string; readonly platform?: "Service"; readonly model_id?: string }>) =>
  Effect.gen(function*() {
    const leaderboards = yield* Leaderboards
    const { id } = yield* leaderboards.create(owner, { name: "Support", dataset_type: "PUSH", system_prompt: "Be brief." })
    const added = yield* leaderboards.addCandidates(
      owner,
      id,
      candidates.map((c) => c.platform === "Service" ? c : { ...c, model_name: c.model_name ?? `vendor/${c.name}` })
    )
    return { id, candidates: added }
  })

const infer = (principal: PrincipalType, id: LeaderboardId, request: InferenceRequest) =>
  Effect.flatMap(Inference, (inference) => inference.infer(principal, id, request))

describe("Inference.infer", () => {
  it("answers with the upstream's body, naming the serving candidate and the trace that records the call", async () => {
    const { asked, run, traces } = world()
    const { candidate, served } = await run(Effect.gen(function*() {
      const { candidates: [candidate], id } = yield* leaderboardWith({ name: "cheap" })
      return { candidate: candidate!, served: yield* infer(token(null), id, { input: "Hello", temperature: 0.2 }) }
    }))
    // the body as it arrived, and what the headers name: the trace, the candidate and its platform
    expect(served).toEqual({ body: bodyOf("cheap"), traceId: traces[0]!.id, candidate })
    expect(served.candidate.platform).toBe("Router")
    const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }]
    // a router model without prices of its own is called at the router catalogue's
    expect(asked).toEqual([{
      target: expect.objectContaining({
        candidateId: candidate.id,
        platform: "Router",
        modelName: "vendor/cheap",
        inputPricePerMTokens: 1,
        outputPricePerMTokens: 2
      }),
      request: { messages, parameters: { temperature: 0.2 } }
    }])
    expect(traces).toEqual([{
      id: served.traceId,
      workspace_id: workspace,
      leaderboard_id: candidate.leaderboard_id,
      leaderboard_model_id: candidate.id,
      source: "inference",
      run_id: null,
      input: "Hello",
      messages,
      output: "cheap says hi",
      status: "success",
      error: null,
      latency_ms: 40,
      usage,
      cost_usd: (100 * 1 + 20 * 2) / 1e6,
      token_id: uuid(50),
      created_at: DateTime.makeUnsafe(now)
    }])
  })

  it("a session's call is traced without a token; a budgeted token's call is capped at the default max_tokens", async () => {
    const { asked, run, traces } = world()
    await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "cheap" })
      yield* infer(owner, id, { messages: [{ role: "user", content: "Hi" }] })
      yield* infer(token(1), id, { prompt: "Hi" })
      yield* infer(token(1), id, { prompt: "Hi", max_tokens: 50 })
    }))
    expect(traces.map((t) => t.token_id)).toEqual([null, uuid(50), uuid(50)])
    expect(asked.map((a) => a.request.parameters)).toEqual([{}, { max_tokens: 4096 }, { max_tokens: 50 }])
  })

  it("a token whose budget is spent is refused before the upstream is called, and the refusal leaves no trace", async () => {
    const { asked, run, traces } = world()
    const refused = await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "cheap" })
      // the first call fits in $0.0001 and costs $0.00014: the budget is spent
      yield* infer(token(0.0001), id, { input: "Hello" })
      return yield* Effect.flip(infer(token(0.0001), id, { input: "Hello" }))
    }))
    expect(refused).toMatchObject({
      _tag: "BudgetExceeded",
      token_id: uuid(50),
      budget_limit: 0.0001,
      spent_usd: 0.00014,
      retry_after_seconds: 14 * 3600
    })
    expect(asked).toHaveLength(1)
    expect(traces).toHaveLength(1)
  })

  it("serves the manual choice, else the ranking's winner, else the chosen candidate, else the only one; else 409 no_serving_model", async () => {
    const { asked, run } = world()
    const served = await run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const repository = yield* LeaderboardRepository
      const { candidates: [a, b], id } = yield* leaderboardWith({ name: "a" }, { name: "b" })
      const servedBy = Effect.map(infer(owner, id, { input: "Hello" }), (s) => s.candidate.name)
      const none = yield* Effect.flip(infer(owner, id, { input: "Hello" }))
      const untried = asked.length
      yield* leaderboards.update(owner, id, { chosen_leaderboard_model_id: a!.id, extra: {} })
      const chosen = yield* servedBy
      yield* repository.setRankingWinner(id, b!.id)
      const winner = yield* servedBy
      yield* leaderboards.update(owner, id, { chosen_model_strategy: "manual", extra: {} })
      const manual = yield* servedBy
      return { none, untried, chosen, winner, manual }
    }))
    expect(served).toEqual({
      none: expect.objectContaining({ _tag: "NoServingModel" }),
      untried: 0,
      chosen: "a",
      winner: "b",
      manual: "a"
    })
  })

  it("servingCandidate: a winner that is no longer a candidate gives way to the chosen one; a manual choice of none serves none", () => {
    const candidate = (n: number) =>
      new Candidate({
        id: CandidateId.make(uuid(n)),
        leaderboard_id: LeaderboardId.make(uuid(9)),
        name: `c${n}`,
        platform: "Router",
        model_name: `vendor/c${n}`,
        model_url: null,
        url: null,
        model_id: null,
        auth_type: "bearer",
        auth_header_name: null,
        has_token: false,
        input_price_per_m_tokens: null,
        output_price_per_m_tokens: null,
        created_at: DateTime.makeUnsafe(0)
      })
    const [a, b] = [candidate(1), candidate(2)]
    const pick = (strategy: "manual" | "ranking_winner", chosen: Candidate | null, candidates: ReadonlyArray<Candidate>, winner: string | null) =>
      servingCandidate({ chosen_model_strategy: strategy, chosen_leaderboard_model_id: chosen?.id ?? null }, candidates, winner)?.name
    expect(pick("ranking_winner", null, [a], null)).toBe("c1")
    expect(pick("ranking_winner", null, [a, b], null)).toBeUndefined()
    expect(pick("ranking_winner", a, [a, b], uuid(3))).toBe("c1")
    expect(pick("ranking_winner", null, [a, b], uuid(3))).toBeUndefined()
    expect(pick("manual", null, [a], a.id)).toBeUndefined()
    expect(pick("manual", b, [a], a.id)).toBeUndefined()
  })

  it("an upstream failure is 502 upstream_failed, naming the candidate and the trace of the failed call", async () => {
    const { run, traces } = world()
    const { candidate, failure } = await run(Effect.gen(function*() {
      const { candidates: [candidate], id } = yield* leaderboardWith({ name: "down" })
      return { candidate: candidate!, failure: yield* Effect.flip(infer(token(null), id, { input: "Hello" })) }
    }))
    expect(failure).toMatchObject({
      _tag: "UpstreamFailed",
      candidate_id: candidate.id,
      candidate_name: "down",
      reason: "vendor/down answered 503",
      trace_id: traces[0]!.id
    })
    expect(traces).toEqual([expect.objectContaining({
      leaderboard_model_id: candidate.id,
      source: "inference",
      status: "error",
      error: "vendor/down answered 503",
      output: null,
      latency_ms: 12,
      usage: null,
      cost_usd: null,
      token_id: uuid(50)
    })])
  })

  it("a Service candidate is answered by its model (ServiceModels), failing as an upstream does when the model cannot answer", async () => {
    const { asked, run, traces } = world()
    const failure = await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "tuned", platform: "Service", model_id: uuid(70) })
      return yield* Effect.flip(infer(owner, id, { input: "Hello" }))
    }))
    expect(failure).toMatchObject({ _tag: "UpstreamFailed", candidate_name: "tuned", reason: "model not found" })
    expect(asked).toEqual([])
    expect(traces).toEqual([expect.objectContaining({ status: "error", error: "model not found", latency_ms: 0 })])
  })

  it("refuses input that is not one conversation, an archived leaderboard and another workspace's, before any call", async () => {
    const { asked, run, traces } = world()
    const refusals = await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "cheap" })
      const refused = (principal: PrincipalType, request: InferenceRequest) => Effect.flip(infer(principal, id, request))
      const nothing = yield* refused(owner, {})
      const twice = yield* refused(owner, { input: "Hello", prompt: "Hello" })
      const elsewhere = yield* refused(stranger, { input: "Hello" })
      yield* (yield* Leaderboards).update(owner, id, { status: "archived", extra: {} })
      const archived = yield* refused(owner, { input: "Hello" })
      return { nothing, twice, elsewhere, archived }
    }))
    expect(refusals).toEqual({
      nothing: expect.objectContaining({ _tag: "InvalidInput", path: ["messages"] }),
      twice: expect.objectContaining({ _tag: "InvalidInput", path: ["prompt"] }),
      elsewhere: expect.objectContaining({ _tag: "NotFound", resource: "leaderboard" }),
      archived: expect.objectContaining({ _tag: "LeaderboardArchived" })
    })
    expect(asked).toEqual([])
    expect(traces).toEqual([])
  })
})

describe("Inference.infer, the whole OpenAI request", () => {
  it("forwards every parameter but model, the messages as built in OpenAI's shapes, capping a budgeted call under the name the caller used", async () => {
    const { asked, run, traces } = world()
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { id: { type: "string" } } } } }]
    const messages = [
      { role: "user", content: [{ type: "text", text: "What is on this order?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"id\":\"7\"}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "{\"items\":2}" }
    ]
    const parameters = {
      temperature: 0.3,
      tools,
      tool_choice: "auto",
      response_format: { type: "json_object" },
      top_p: 0.9,
      stop: ["\n\n"],
      seed: 7,
      user: "u-1",
      logprobs: true
    }
    await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "cheap" })
      yield* infer(owner, id, { model: "gpt-4o", messages, ...parameters })
      yield* infer(token(1), id, { model: "gpt-4o", messages, ...parameters, max_completion_tokens: 300 })
    }))
    // the system prompt leads; the last user message is the one given as parts, kept with its image
    const built = [{ role: "system", content: "Be brief." }, ...messages]
    expect(asked.map((a) => a.request)).toEqual([
      { messages: built, parameters },
      { messages: built, parameters: { ...parameters, max_completion_tokens: 300 } }
    ])
    expect(traces.map((t) => [t.input, t.messages])).toEqual([["What is on this order?", built], ["What is on this order?", built]])
  })
})

describe("Inference.infer, streamed", () => {
  /** A leaderboard serving `name` (at vendor/cheap's prices), and its call streamed by `principal`. */
  const streamed = (name: string, principal: PrincipalType = token(1)) =>
    Effect.gen(function*() {
      const { candidates: [candidate], id } = yield* leaderboardWith({ name, model_name: "vendor/cheap" })
      const served = yield* infer(principal, id, { input: "Hello", stream: true, stream_options: { include_usage: true }, max_tokens: 50 })
      return { candidate: candidate!, served }
    })

  it("passes the upstream's events on unchanged, and traces and settles the call once, when the stream has ended", async () => {
    const { asked, closed, run, sent, settled, traces } = world()
    const { candidate, events, served, tracedBefore } = await run(Effect.gen(function*() {
      const { candidate, served } = yield* streamed("cheap")
      expect(served.body).toBeUndefined()
      const tracedBefore = traces.length
      const events = yield* Stream.runCollect(served.events!)
      return { candidate, events, served, tracedBefore }
    }))
    expect(tracedBefore).toBe(0)
    expect(events).toHaveLength(streamedTexts.length + 1)
    events.forEach((event, i) => expect(event).toBe(sent[i]))
    expect(asked).toEqual([{
      target: expect.objectContaining({ candidateId: candidate.id }),
      request: { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }], parameters: { max_tokens: 50 } },
      options: { includeUsage: true }
    }])
    const cost = (100 * 1 + 20 * 2) / 1e6
    expect(traces).toEqual([expect.objectContaining({
      id: served.traceId,
      leaderboard_model_id: candidate.id,
      source: "inference",
      input: "Hello",
      output: "Hello there",
      status: "success",
      error: null,
      latency_ms: 30,
      usage,
      cost_usd: cost,
      token_id: uuid(50)
    })])
    expect(settled).toEqual([{ reservation: expect.any(String), cost }])
    expect(closed.streams).toBe(1)
  })

  it("asks the upstream for the usage chunk without passing it on when the caller did not ask for it", async () => {
    const { asked, run } = world()
    await run(Effect.gen(function*() {
      const { id } = yield* leaderboardWith({ name: "cheap" })
      const served = yield* infer(owner, id, { input: "Hello", stream: true })
      yield* Stream.runDrain(served.events!)
    }))
    expect(asked.map((a) => a.options)).toEqual([{ includeUsage: false }])
    expect(asked[0]!.request.parameters).toEqual({})
  })

  it("a consumer interrupted mid-stream records the call as cancelled, with what had arrived, once", async () => {
    const { closed, run, settled, traces } = world()
    const { received } = await run(Effect.gen(function*() {
      const { served } = yield* streamed("stalls")
      const first = yield* Deferred.make<void>()
      const received: Array<Uint8Array> = []
      const consumer = yield* Effect.forkChild(Stream.runForEach(served.events!, (event) =>
        Effect.suspend(() => {
          received.push(event)
          return received.length === 2 ? Deferred.succeed(first, undefined) : Effect.void
        })))
      yield* Deferred.await(first)
      yield* Fiber.interrupt(consumer)
      // traced as soon as the consumer is gone, not when the request's scope closes
      expect(traces).toHaveLength(1)
      return { received }
    }))
    expect(received).toHaveLength(2)
    expect(traces).toEqual([expect.objectContaining({ status: "cancelled", output: "Hello ", error: null, usage: null, cost_usd: null })])
    expect(closed.streams).toBe(1)
    // nothing reported its cost: a priced call is charged its bound
    const bound = boundCall({ input: 1, output: 2 }, [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }], 50, 4096)
    expect(settled).toEqual([{ reservation: expect.any(String), cost: bound._tag === "Bounded" ? bound.amount : "unbounded" }])
  })

  it("a consumer done reading before the end records the call as cancelled, not as a whole answer", async () => {
    const { closed, run, settled, traces } = world()
    const taken = await run(Effect.gen(function*() {
      const { served } = yield* streamed("cheap")
      return yield* Stream.runCollect(Stream.take(served.events!, 1))
    }))
    expect(taken).toHaveLength(1)
    expect(traces).toEqual([expect.objectContaining({ status: "cancelled", output: "Hel" })])
    expect(settled).toHaveLength(1)
    expect(closed.streams).toBe(1)
  })

  it("a budgeted stream lasts at most streamLifetime, its reservation as long: then it is cut off as cancelled and settled", async () => {
    const { run, settled, traces } = world()
    const { received } = await run(Effect.gen(function*() {
      const { served } = yield* streamed("stalls")
      const received: Array<Uint8Array> = []
      const reader = yield* Effect.forkChild(Stream.runForEach(served.events!, (event) => Effect.sync(() => received.push(event))))
      yield* TestClock.adjust(Duration.subtract(streamLifetime, Duration.seconds(1)))
      expect(traces).toHaveLength(0)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.join(reader)
      return { received }
    }))
    expect(received).toHaveLength(2)
    expect(traces).toEqual([expect.objectContaining({ status: "cancelled", output: "Hello " })])
    expect(settled).toHaveLength(1)
  })

  it("a stream never run records the call as cancelled once, when the caller's scope closes", async () => {
    const { closed, run, settled, traces } = world()
    const { inScope, served } = await run(Effect.gen(function*() {
      const { served } = yield* Effect.scoped(streamed("cheap"))
      return { inScope: 0, served }
    }))
    expect(inScope).toBe(0)
    expect(traces).toEqual([expect.objectContaining({ id: served.traceId, status: "cancelled", output: null, usage: null, error: null })])
    expect(settled).toHaveLength(1)
    expect(closed.streams).toBe(1)
  })

  it("an upstream that fails to open is upstream_failed, with an error trace and nothing charged", async () => {
    const { run, settled, traces } = world()
    const { candidate, failure } = await run(Effect.gen(function*() {
      const { candidates: [candidate], id } = yield* leaderboardWith({ name: "down" })
      return { candidate: candidate!, failure: yield* Effect.flip(infer(token(1), id, { input: "Hello", stream: true })) }
    }))
    expect(failure).toMatchObject({
      _tag: "UpstreamFailed",
      candidate_id: candidate.id,
      reason: "vendor/down answered 503",
      trace_id: traces[0]!.id
    })
    expect(traces).toEqual([expect.objectContaining({ status: "error", error: "vendor/down answered 503", output: null, latency_ms: 12 })])
    expect(settled).toEqual([{ reservation: expect.any(String), cost: null }])
  })

  it("an upstream failing mid-stream fails the stream with upstream_failed after the events before it, and traces the error with what arrived", async () => {
    const { closed, run, sent, settled, traces } = world()
    const { failure, received, served } = await run(Effect.gen(function*() {
      const { served } = yield* streamed("breaks")
      const received: Array<Uint8Array> = []
      const failure = yield* Effect.flip(Stream.runForEach(served.events!, (event) => Effect.sync(() => void received.push(event))))
      return { failure, received, served }
    }))
    expect(received).toEqual(sent)
    expect(received).toHaveLength(2)
    expect(failure).toMatchObject({
      _tag: "UpstreamFailed",
      candidate_name: "breaks",
      reason: "vendor/breaks: connection reset",
      trace_id: served.traceId
    })
    expect(traces).toEqual([expect.objectContaining({
      id: served.traceId,
      status: "error",
      error: "vendor/breaks: connection reset",
      output: "Hello "
    })])
    expect(settled).toHaveLength(1)
    expect(closed.streams).toBe(1)
  })
})
