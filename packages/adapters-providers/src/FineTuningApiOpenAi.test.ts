import { assert, describe, it } from "@effect/vitest"
import { FineTuningApi } from "@podium/domain/models"
import { Effect, Layer, Option, Redacted } from "effect"
import { FineTuningApiOpenAi } from "./FineTuningApiOpenAi.ts"
import { SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"

const key = "sk-fine-tune-adapter-0123456789"
const wrong = "sk-wrong-key-9876543210abcdef"

interface Seen {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly authorization: string | undefined
  readonly contentType: string
  readonly body: Buffer
}
const seen: Array<Seen> = []
/** What OpenAI answers to the request; each test says. */
let reply: (request: Seen) => { readonly status: number; readonly body: unknown } = () => ({ status: 500, body: {} })

const upstream = loopbackServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const url = new URL(request.url ?? "/", "http://upstream")
    const one: Seen = {
      method: request.method ?? "",
      path: url.pathname,
      query: url.searchParams,
      authorization: request.headers.authorization,
      contentType: request.headers["content-type"] ?? "",
      body: Buffer.concat(chunks)
    }
    seen.push(one)
    const { body, status } = reply(one)
    const text = typeof body === "string" ? body : JSON.stringify(body)
    setTimeout(() => response.writeHead(status, { "content-type": "application/json" }).end(text), status === 504 ? 500 : 0)
  })
})

const layer = (options: { readonly apiKey?: string; readonly configured?: boolean } = {}) =>
  FineTuningApiOpenAi.layer({
    baseUrl: options.configured === false ? undefined : `${upstream.url()}/v1/`,
    apiKey: Redacted.make(options.apiKey ?? key),
    timeout: "200 millis"
  }).pipe(Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true })))

const answering = (handler: typeof reply) => {
  seen.length = 0
  reply = handler
}

const job = (fields: Record<string, unknown>) => ({
  object: "fine_tuning.job",
  id: "ftjob-1",
  model: "gpt-4o-mini-2024-07-18",
  created_at: 1_790_000_000,
  fine_tuned_model: null,
  status: "validating_files",
  trained_tokens: null,
  error: null,
  metadata: {},
  ...fields
})

describe("FineTuningApiOpenAi", () => {
  it.effect("uploads the JSONL as multipart with purpose fine-tune, content intact", () =>
    Effect.gen(function*() {
      answering(() => ({ status: 200, body: { object: "file", id: "file-abc", purpose: "fine-tune" } }))
      const jsonl = `{"messages":[{"role":"user","content":"héllo \\"world\\" ✓"}]}\n{"messages":[]}\n`
      const id = yield* (yield* FineTuningApi).upload("run-1.jsonl", jsonl)
      assert.strictEqual(id, "file-abc")
      const [request] = seen
      assert.strictEqual(request?.method, "POST")
      assert.strictEqual(request?.path, "/v1/files")
      assert.strictEqual(request?.authorization, `Bearer ${key}`)
      const form = yield* Effect.promise(() =>
        new Request("http://x", { method: "POST", headers: { "content-type": request!.contentType }, body: request!.body }).formData()
      )
      assert.strictEqual(form.get("purpose"), "fine-tune")
      const file = form.get("file")
      assert.instanceOf(file, File)
      assert.strictEqual(file.name, "run-1.jsonl")
      assert.strictEqual(yield* Effect.promise(() => file.text()), jsonl)
    }).pipe(Effect.provide(layer())))

  it.effect("creates a job with metadata, suffix and supervised hyperparameters; validating_files is queued", () =>
    Effect.gen(function*() {
      answering(() => ({ status: 200, body: job({ status: "validating_files", metadata: { podium_run: "r1" } }) }))
      const created = yield* (yield* FineTuningApi).create({
        model: "gpt-4o-mini-2024-07-18",
        training_file: "file-abc",
        validation_file: null,
        metadata: { podium_run: "r1" },
        suffix: "podium",
        hyperparameters: { n_epochs: 3, learning_rate_multiplier: "auto" }
      })
      assert.deepStrictEqual(created, { id: "ftjob-1", status: "queued", fine_tuned_model: null, trained_tokens: null, error: null })
      assert.strictEqual(seen[0]?.path, "/v1/fine_tuning/jobs")
      assert.strictEqual(seen[0]?.contentType, "application/json")
      assert.deepStrictEqual(JSON.parse(seen[0]!.body.toString()), {
        model: "gpt-4o-mini-2024-07-18",
        training_file: "file-abc",
        suffix: "podium",
        metadata: { podium_run: "r1" },
        method: { type: "supervised", supervised: { hyperparameters: { n_epochs: 3, learning_rate_multiplier: "auto" } } }
      })

      yield* (yield* FineTuningApi).create({
        model: "m",
        training_file: "file-abc",
        validation_file: "file-val",
        metadata: {},
        suffix: null,
        hyperparameters: null
      })
      assert.deepStrictEqual(JSON.parse(seen[1]!.body.toString()), {
        model: "m",
        training_file: "file-abc",
        validation_file: "file-val",
        metadata: {}
      })
    }).pipe(Effect.provide(layer())))

  it.effect("finds the newest job by metadata, even when the service ignores the filter", () =>
    Effect.gen(function*() {
      // newest first, as OpenAI lists them, but one service sorts otherwise: created_at decides
      answering(() => ({
        status: 200,
        body: {
          object: "list",
          has_more: false,
          data: [
            job({ id: "ftjob-other", created_at: 1_790_000_300, metadata: { podium_run: "r2" } }),
            job({ id: "ftjob-old", created_at: 1_790_000_100, status: "cancelled", metadata: { podium_run: "r1" } }),
            job({ id: "ftjob-new", created_at: 1_790_000_200, status: "running", metadata: { podium_run: "r1" } }),
            job({ id: "ftjob-bare", created_at: 1_790_000_400, metadata: null })
          ]
        }
      }))
      const found = yield* (yield* FineTuningApi).findByMetadata("podium_run", "r1")
      assert.deepStrictEqual(Option.map(found, (j) => [j.id, j.status]), Option.some(["ftjob-new", "running"]))
      assert.strictEqual(seen[0]?.path, "/v1/fine_tuning/jobs")
      assert.strictEqual(seen[0]?.query.get("metadata[podium_run]"), "r1")
      assert.strictEqual(seen[0]?.query.get("limit"), "100")

      const none = yield* (yield* FineTuningApi).findByMetadata("podium_run", "r9")
      assert.isTrue(Option.isNone(none))
    }).pipe(Effect.provide(layer())))

  it.effect("reads every page of events and returns them oldest first, metrics as finite numbers only", () =>
    Effect.gen(function*() {
      const oldestFirst = Array.from({ length: 250 }, (_, i) => ({
        object: "fine_tuning.job.event",
        id: `ftevent-${String(i).padStart(3, "0")}`,
        created_at: 1_790_000_000 + i,
        level: "info",
        message: `event ${i}`,
        type: i === 7 ? "metrics" : "message",
        data: i === 7 ? { step: 8, train_loss: 0.25, train_mean_token_accuracy: 0.9, full_valid_loss: null, note: "x" } : {}
      }))
      const newestFirst = oldestFirst.toReversed()
      answering((request) => {
        const after = request.query.get("after")
        const limit = Number(request.query.get("limit"))
        const start = after === null ? 0 : newestFirst.findIndex((e) => e.id === after) + 1
        return {
          status: 200,
          body: { object: "list", data: newestFirst.slice(start, start + limit), has_more: start + limit < newestFirst.length }
        }
      })
      const events = yield* (yield* FineTuningApi).events("ftjob-1")
      assert.strictEqual(seen.length, 3)
      assert.deepStrictEqual(seen.map((r) => r.query.get("after")), [null, "ftevent-150", "ftevent-050"])
      assert.strictEqual(seen[0]?.path, "/v1/fine_tuning/jobs/ftjob-1/events")
      assert.deepStrictEqual(events.map((e) => e.id), oldestFirst.map((e) => e.id))
      assert.deepStrictEqual(events[0], {
        id: "ftevent-000",
        created_at: new Date(1_790_000_000_000).toISOString(),
        level: "info",
        message: "event 0",
        metrics: null
      })
      assert.deepStrictEqual(events[7]?.metrics, { step: 8, train_loss: 0.25, train_mean_token_accuracy: 0.9 })
    }).pipe(Effect.provide(layer())))

  it.effect("maps OpenAI's job statuses and a failed job's error message", () =>
    Effect.gen(function*() {
      const cases = [
        ["validating_files", "queued"],
        ["queued", "queued"],
        ["running", "running"],
        ["succeeded", "succeeded"],
        ["failed", "failed"],
        ["cancelled", "cancelled"]
      ] as const
      for (const [upstreamStatus, expected] of cases) {
        answering(() => ({ status: 200, body: job({ status: upstreamStatus }) }))
        const read = yield* (yield* FineTuningApi).job("ftjob-1")
        assert.strictEqual(read.status, expected, upstreamStatus)
        assert.strictEqual(seen[0]?.path, "/v1/fine_tuning/jobs/ftjob-1")
      }

      answering(() => ({
        status: 200,
        body: job({ status: "succeeded", fine_tuned_model: "ft:gpt-4o-mini:podium::abc", trained_tokens: 1234 })
      }))
      assert.deepStrictEqual(yield* (yield* FineTuningApi).job("ftjob-1"), {
        id: "ftjob-1",
        status: "succeeded",
        fine_tuned_model: "ft:gpt-4o-mini:podium::abc",
        trained_tokens: 1234,
        error: null
      })

      answering(() => ({
        status: 200,
        body: job({ status: "failed", error: { code: "invalid_training_file", message: "line 3 is not a chat example", param: "training_file" } })
      }))
      assert.strictEqual((yield* (yield* FineTuningApi).job("ftjob-1")).error, "line 3 is not a chat example")

      answering(() => ({ status: 200, body: job({ status: "paused" }) }))
      const unknown = yield* Effect.flip((yield* FineTuningApi).job("ftjob-1"))
      assert.isFalse(unknown.retryable)
    }).pipe(Effect.provide(layer())))

  it.effect("cancels with a POST to the job's cancel path", () =>
    Effect.gen(function*() {
      answering(() => ({ status: 200, body: job({ status: "cancelled" }) }))
      yield* (yield* FineTuningApi).cancel("ftjob-1")
      assert.deepStrictEqual(seen.map((r) => [r.method, r.path]), [["POST", "/v1/fine_tuning/jobs/ftjob-1/cancel"]])
    }).pipe(Effect.provide(layer())))


  it.effect("a model is called on the same service with the same key", () =>
    Effect.gen(function*() {
      const target = (yield* FineTuningApi).chatTarget("ft:gpt-4o-mini:podium::abc")
      assert.deepStrictEqual<unknown>({ ...target, token: Option.map(target.token, Redacted.value) }, {
        candidateId: "fine-tune:ft:gpt-4o-mini:podium::abc",
        candidateName: "ft:gpt-4o-mini:podium::abc",
        platform: "Custom",
        modelName: "ft:gpt-4o-mini:podium::abc",
        url: `${upstream.url()}/v1`,
        authType: "bearer",
        authHeaderName: null,
        token: Option.some(key),
        inputPricePerMTokens: null,
        outputPricePerMTokens: null
      })
    }).pipe(Effect.provide(layer())))
})

const outcome = (status: number, body: unknown) =>
  Effect.gen(function*() {
    answering(() => ({ status, body }))
    return yield* Effect.flip((yield* FineTuningApi).job("ftjob-1"))
  })

describe("FineTuningApiOpenAi failures", () => {
  it.effect("a refused key is not retryable, and the key the service quotes back is not repeated", () =>
    Effect.gen(function*() {
      answering((request) => ({
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${request.authorization?.slice("Bearer ".length)}.`,
            type: "invalid_request_error",
            code: "invalid_api_key"
          }
        }
      }))
      const error = yield* Effect.flip((yield* FineTuningApi).job("ftjob-1"))
      assert.strictEqual(seen[0]?.authorization, `Bearer ${wrong}`)
      assert.strictEqual(error.status, 401)
      assert.isFalse(error.retryable)
      assert.include(error.reason, "Incorrect API key provided")
      assert.notInclude(error.reason, wrong)
      assert.notInclude(error.reason, wrong.slice(3, 12))
    }).pipe(Effect.provide(layer({ apiKey: wrong }))))

  it.effect("overload, rate limits and garbled answers are retryable; other 4xx are not", () =>
    Effect.gen(function*() {
      const overloaded = yield* outcome(503, { error: { message: "The server is overloaded", type: "server_error" } })
      assert.deepStrictEqual([overloaded.status, overloaded.retryable], [503, true])
      assert.include(overloaded.reason, "The server is overloaded")
      assert.isTrue((yield* outcome(429, { error: { message: "Rate limit reached" } })).retryable)
      assert.isTrue((yield* outcome(200, "<html>proxy</html>")).retryable)
      const invalid = yield* outcome(400, { error: { message: "invalid training_file: file-x" } })
      assert.deepStrictEqual([invalid.status, invalid.retryable], [400, false])
      const notFound = yield* outcome(404, "not json")
      assert.deepStrictEqual([notFound.status, notFound.retryable, notFound.reason], [404, false, "the fine-tuning service answered 404"])
    }).pipe(Effect.provide(layer())))

  it.live("a service that does not answer in time is retryable", () =>
    Effect.gen(function*() {
      // the upstream answers 504 only after 500 ms, beyond the 200 ms time-out
      const slow = yield* outcome(504, {})
      assert.deepStrictEqual([slow.status, slow.retryable], [null, true])
      assert.include(slow.reason, "did not answer within 0.2 s")
    }).pipe(Effect.provide(layer())))

  it.effect("without a base URL nothing is configured and every operation fails, not retryable", () =>
    Effect.gen(function*() {
      answering(() => ({ status: 200, body: {} }))
      const fineTuning = yield* FineTuningApi
      assert.isFalse(fineTuning.configured)
      const failures = yield* Effect.all([
        Effect.flip(fineTuning.upload("a.jsonl", "{}")),
        Effect.flip(fineTuning.create({ model: "m", training_file: "f", validation_file: null, metadata: {}, suffix: null, hyperparameters: null })),
        Effect.flip(fineTuning.findByMetadata("k", "v")),
        Effect.flip(fineTuning.job("j")),
        Effect.flip(fineTuning.events("j")),
        Effect.flip(fineTuning.cancel("j"))
      ])
      for (const failure of failures) {
        assert.deepStrictEqual([failure.reason, failure.status, failure.retryable], ["FINE_TUNE_BASE_URL is not set", null, false])
      }
      assert.strictEqual(seen.length, 0)
    }).pipe(Effect.provide(layer({ configured: false }))))

})
