import { assert, describe, it } from "@effect/vitest"
import { DatasetUnavailable, RunDatasetSource } from "@podium/domain/runs"
import { Effect, Layer, Option, Redacted } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { RunDatasetSourceHttp, type RunDatasetSourceHttpOptions } from "./RunDatasetSourceHttp.ts"
import { SafeHttp, type SafeHttpOptions } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"

const token = "hf_secret_token_123"

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

const files: Record<string, { readonly type: string; readonly body: string }> = {
  "/data": { type: "application/jsonl", body: "{\"q\":\"a\"}\n{\"q\":\"b\"}\n" },
  "/array": { type: "application/json", body: "[{\"q\":\"a\"},{\"q\":\"b\"}]" },
  "/wrapped": { type: "application/json; charset=utf-8", body: "{\"rows\":[{\"q\":\"a\"}]}" },
  "/table": { type: "text/csv", body: "q,a\nfirst,1\n\"second, quoted\",2\n" },
  "/plain.csv": { type: "text/plain", body: "q,a\nx,1\n" },
  "/plain.jsonl": { type: "text/plain", body: "{\"q\":\"x\",\"a\":1}\n" },
  "/bad.jsonl": { type: "application/jsonl", body: "{\"q\":1}\n{\"q\":2}\nnope\n" },
  "/empty.jsonl": { type: "application/jsonl", body: "\n\n" }
}

// 250 rows in the default config's "test" split, 3 in "other/dev"
const hubRows = (config: string, split: string) =>
  config === "default" && split === "test"
    ? Array.from({ length: 250 }, (_, i) => ({ question: `q${i}`, answer: i }))
    : config === "other" && split === "dev"
    ? [{ question: "dev0" }, { question: "dev1" }, { question: "dev2" }]
    : []

const hubRequests: Array<{ readonly path: string; readonly authorization: string | undefined }> = []
let bigStreamed = 0

const fake = (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://fake")
  if (url.pathname.startsWith("/hub/")) {
    hubRequests.push({ path: url.pathname + url.search, authorization: request.headers.authorization })
    const dataset = url.searchParams.get("dataset")
    if (dataset === "acme/private" && request.headers.authorization !== `Bearer ${token}`) {
      return json(response, 401, { error: "Unauthorized" })
    }
    if (dataset === "acme/broken") return json(response, 500, { error: `viewer failed for ${token}` })
    if (dataset === "acme/garbled") return response.writeHead(200).end("{not json")
    if (dataset === "acme/huge") {
      if (url.pathname === "/hub/splits") return json(response, 200, { splits: [{ dataset, config: "default", split: "train" }] })
      return json(response, 200, { rows: [{ row_idx: 0, row: { q: 0 } }], num_rows_total: 100_001 })
    }
    if (dataset !== "acme/qa" && dataset !== "acme/private") return json(response, 404, { error: "Not found" })
    if (url.pathname === "/hub/splits") {
      return json(response, 200, {
        splits: [
          { dataset, config: "default", split: "train" },
          { dataset, config: "default", split: "validation" },
          { dataset, config: "default", split: "test" },
          { dataset, config: "other", split: "dev" }
        ]
      })
    }
    if (url.pathname === "/hub/rows") {
      const all = hubRows(url.searchParams.get("config") ?? "", url.searchParams.get("split") ?? "")
      const offset = Number(url.searchParams.get("offset"))
      const length = Number(url.searchParams.get("length"))
      if (length > 100) return json(response, 422, { error: "length must be at most 100" })
      const rows = all.slice(offset, offset + length).map((row, i) => ({ row_idx: offset + i, row, truncated_cells: [] }))
      return json(response, 200, { features: [], rows, num_rows_total: all.length, num_rows_per_page: 100 })
    }
    return json(response, 404, { error: "Not found" })
  }
  if (url.pathname === "/big") {
    // an endless body without a length: the reader must stop on its own
    response.writeHead(200, { "content-type": "application/jsonl" })
    const line = Buffer.from("{\"q\":\"" + "x".repeat(1000) + "\"}\n")
    const pump = () => {
      while (!response.destroyed && bigStreamed < 50_000_000) {
        bigStreamed += line.length
        if (!response.write(line)) return response.once("drain", pump)
      }
      response.end()
    }
    return pump()
  }
  if (url.pathname === "/declared-big") {
    response.writeHead(200, { "content-type": "application/jsonl", "content-length": "1000000" })
    return response.end()
  }
  if (url.pathname === "/slow") return
  if (url.pathname === "/moved") return response.writeHead(302, { location: "/table" }).end()
  if (url.pathname === "/latin1.csv") {
    return response.writeHead(200, { "content-type": "text/csv" }).end(Buffer.from("q\ncaf\xe9\n", "latin1"))
  }
  const file = files[url.pathname]
  if (file === undefined) return response.writeHead(404).end("missing")
  response.writeHead(200, { "content-type": file.type }).end(file.body)
}

const upstream = loopbackServer(fake)

const sourceLayer = (options?: Partial<RunDatasetSourceHttpOptions>, pool?: Partial<SafeHttpOptions>) =>
  RunDatasetSourceHttp.layer({ hubBaseUrl: `${upstream.url()}/hub/`, ...options }).pipe(
    Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true, ...pool }))
  )

const fetchRows = (
  url: string,
  options?: { readonly token?: string; readonly layer?: Layer.Layer<RunDatasetSource> }
) =>
  RunDatasetSource.use((source) =>
    source.fetch(url, options?.token === undefined ? Option.none() : Option.some(Redacted.make(options.token)))
  ).pipe(Effect.provide(options?.layer ?? sourceLayer()))

const failure = (url: string, options?: Parameters<typeof fetchRows>[1]) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(fetchRows(url, options))
    assert.instanceOf(error, DatasetUnavailable)
    assert.strictEqual(error.url, url)
    assert.notInclude(error.reason, token)
    return error.reason
  })

describe("RunDatasetSourceHttp files", () => {
  it.effect("reads JSONL, a JSON array, a rows wrapper and CSV by content type", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/data`), [{ q: "a" }, { q: "b" }])
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/array`), [{ q: "a" }, { q: "b" }])
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/wrapped`), [{ q: "a" }])
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/table`), [
        { q: "first", a: "1" },
        { q: "second, quoted", a: "2" }
      ])
    }))

  it.effect("falls back to the URL's extension when the content type says text/plain", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/plain.csv?download=1`), [{ q: "x", a: "1" }])
      assert.deepStrictEqual(yield* fetchRows(`${upstream.url()}/plain.jsonl`), [{ q: "x", a: 1 }])
    }))

  it.effect("follows a redirect through the guarded pool", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* fetchRows(`${upstream.url()}/moved`)).length, 2)
    }))

  it.effect("reports the status of a URL that does not answer 2xx", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* failure(`${upstream.url()}/nowhere.jsonl`), "the dataset URL answered 404")
    }))

  it.effect("stops reading a body as soon as it passes the byte limit", () =>
    Effect.gen(function*() {
      bigStreamed = 0
      const reason = yield* failure(`${upstream.url()}/big`, { layer: sourceLayer({ maxBytes: 100_000 }) })
      assert.strictEqual(reason, "the dataset file is larger than 0.1 MiB")
      assert.isBelow(bigStreamed, 20_000_000) // the server was cut off long before its 50 MB
      assert.strictEqual(
        yield* failure(`${upstream.url()}/declared-big`, { layer: sourceLayer({ maxBytes: 1024 * 1024 / 2 }) }),
        "the dataset file is larger than 0.5 MiB"
      )
      // the pool's own response limit (for API answers) does not apply to dataset files: theirs does
      bigStreamed = 0
      assert.strictEqual(
        yield* failure(`${upstream.url()}/big`, { layer: sourceLayer({ maxBytes: 100_000 }, { maxResponseBytes: 50_000 }) }),
        "the dataset file is larger than 0.1 MiB"
      )
      assert.isBelow(bigStreamed, 20_000_000)
    }))

  it.effect("passes on the parser's reason, with its line", () =>
    Effect.gen(function*() {
      assert.match(yield* failure(`${upstream.url()}/bad.jsonl`), /^Line 3 is not valid JSON/)
      assert.strictEqual(yield* failure(`${upstream.url()}/empty.jsonl`), "The file is empty")
      assert.strictEqual(yield* failure(`${upstream.url()}/latin1.csv`), "the dataset file is not UTF-8 text")
    }))

  it.effect("refuses private addresses unless the pool allows them, and URLs that are not http", () =>
    Effect.gen(function*() {
      const blocked = yield* failure(`${upstream.url()}/data`, { layer: sourceLayer({}, { allowPrivateNetwork: false }) })
      assert.match(blocked, /^Refusing to connect to 127\.0\.0\.1/)
      assert.strictEqual(yield* failure("ftp://example.test/data.csv"), "the dataset URL must start with http:// or https://")
      assert.strictEqual(yield* failure("not a url"), "the dataset URL is not a valid URL")
    }))

  it.effect("gives up on a server that does not answer in time", () =>
    Effect.gen(function*() {
      const reason = yield* failure(`${upstream.url()}/slow`, {
        layer: sourceLayer({ timeout: "200 millis" })
      })
      assert.strictEqual(reason, "the dataset URL did not answer within 0.2 s")
    }))
})

describe("RunDatasetSourceHttp hub", () => {
  it.effect("reads every row of the test split, 100 a page, sending the token as a bearer", () =>
    Effect.gen(function*() {
      hubRequests.length = 0
      const rows = yield* fetchRows("https://huggingface.co/datasets/acme/private?row=3", { token })
      assert.deepStrictEqual(rows, hubRows("default", "test"))
      const pages = hubRequests.filter((_) => _.path.startsWith("/hub/rows"))
      assert.deepStrictEqual(
        pages.map((_) => new URL(_.path, "http://fake").searchParams.get("offset")).sort(),
        ["0", "100", "200"]
      )
      assert.isTrue(hubRequests.every((_) => _.authorization === `Bearer ${token}`))
      assert.strictEqual(new URL(hubRequests[0]!.path, "http://fake").searchParams.get("dataset"), "acme/private")
    }))

  it.effect("holds the hub's pages together to the byte limit of a file", () =>
    Effect.gen(function*() {
      // 250 rows come in three pages of about 7 kB each: each page fits in 10 kB, all three do not
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/private", { token, layer: sourceLayer({ maxBytes: 10_000 }) }),
        "the dataset's rows are larger than 0.01 MiB"
      )
      assert.lengthOf(yield* fetchRows("https://huggingface.co/datasets/acme/private", { token, layer: sourceLayer({ maxBytes: 60_000 }) }), 250)
    }))

  it.effect("reads the config and split named by a /viewer/ URL, and accepts hf:// URLs", () =>
    Effect.gen(function*() {
      hubRequests.length = 0
      const rows = yield* fetchRows("https://huggingface.co/datasets/acme/qa/viewer/other/dev")
      assert.deepStrictEqual(rows, [{ question: "dev0" }, { question: "dev1" }, { question: "dev2" }])
      assert.isTrue(hubRequests.every((_) => _.authorization === undefined))
      assert.strictEqual((yield* fetchRows("hf://datasets/acme/qa@main")).length, 250)
      assert.strictEqual((yield* fetchRows("https://huggingface.co/datasets/acme/qa/viewer/other")).length, 3)
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/qa/viewer/default/nope"),
        "the Hugging Face dataset acme/qa has no split default/nope"
      )
    }))

  it.effect("reports a dataset the hub will not show as not found or not accessible", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/missing"),
        "the Hugging Face dataset acme/missing was not found or is not accessible (the workspace has no hub token)"
      )
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/private", { token: "hf_wrong_token" }),
        "the Hugging Face dataset acme/private was not found or is not accessible with the workspace's hub token"
      )
    }))

  it.effect("reports other hub failures briefly, without the token", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/broken", { token }),
        "the hub answered 500: viewer failed for [redacted]"
      )
      assert.strictEqual(yield* failure("https://huggingface.co/datasets/acme/garbled"), "the hub sent an unexpected answer")
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/huge"),
        "acme/huge (default/train) has more than 100,000 rows"
      )
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme"),
        "a Hugging Face dataset URL must name the dataset as /datasets/{owner}/{name}"
      )
    }))

  it.effect("without a hub, hub datasets are unavailable", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure("https://huggingface.co/datasets/acme/qa", { layer: sourceLayer({ hubBaseUrl: undefined }) }),
        "the hub is not configured"
      )
    }))
})
