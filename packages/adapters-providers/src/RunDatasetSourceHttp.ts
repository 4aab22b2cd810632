import { maxDatasetFileBytes, maxDatasetFileRows, parseDatasetFile } from "@podium/domain/datasets"
import { DatasetUnavailable, RunDatasetSource } from "@podium/domain/runs"
import { Duration, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import type { Dispatcher } from "undici"
import { redactSecret } from "./Redaction.ts"
import { SafeHttp, SafeHttpError, type SafeRequestOptions } from "./SafeHttpClient.ts"

export interface RunDatasetSourceHttpOptions {
  /** Root of the hub's dataset-viewer API (`/splits`, `/rows`); unset means hub datasets are unavailable. */
  readonly hubBaseUrl?: string | undefined
  /** Bounds each exchange: the whole file download, or one hub call. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
  /** The largest file accepted, in bytes. Default `maxDatasetFileBytes` (50 MiB). */
  readonly maxBytes?: number | undefined
}

/** The dataset-viewer API's page size limit. */
const pageLength = 100
const pageConcurrency = 4

const Splits = Schema.fromJsonString(Schema.Struct({
  splits: Schema.Array(Schema.Struct({ config: Schema.String, split: Schema.String }))
}))

const RowsPage = Schema.fromJsonString(Schema.Struct({
  rows: Schema.Array(Schema.Struct({ row: Schema.Record(Schema.String, Schema.Unknown) })),
  num_rows_total: Schema.Number
}))

interface HubReference {
  readonly dataset: string
  readonly config?: string | undefined
  readonly split?: string | undefined
}

const hubName = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
const hubHosts = new Set(["huggingface.co", "www.huggingface.co"])

const decoded = (segment: string | undefined): string | undefined => {
  if (segment === undefined || segment === "") return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/**
 * The hub dataset a URL names: `https://huggingface.co/datasets/{owner}/{name}[/...]` (with
 * `/viewer/{config}[/{split}]` choosing the split) or `hf://datasets/{owner}/{name}[@revision][/...]`.
 * `undefined` when the URL is not a hub dataset URL; `"malformed"` when it is one without a valid name.
 */
const hubReference = (input: string): HubReference | "malformed" | undefined => {
  const url = input.trim()
  let segments: Array<string>
  if (/^hf:\/\/datasets\//i.test(url)) {
    segments = url.slice("hf://datasets/".length).split(/[?#]/)[0]!.split("/")
    segments[1] = segments[1]?.split("@")[0] ?? ""
  } else {
    const parsed = URL.parse(url)
    if (parsed === null || !/^https?:$/.test(parsed.protocol) || !hubHosts.has(parsed.hostname)) return undefined
    const path = parsed.pathname.split("/").slice(1)
    if (path[0] !== "datasets") return undefined
    segments = path.slice(1)
  }
  const [owner, name, view, config, split] = segments.map(decoded)
  if (owner === undefined || name === undefined || !hubName.test(owner) || !hubName.test(name)) return "malformed"
  return view === "viewer" ? { dataset: `${owner}/${name}`, config, split } : { dataset: `${owner}/${name}` }
}

/**
 * The split read from a hub dataset: the one the URL names (`/viewer/{config}/{split}`); else,
 * among the splits of the config the URL names (all splits when it names none), the first called
 * "test", else the first called "validation", else the first listed. Held-out rows are what an
 * evaluation wants, and "test" is where datasets keep them; the hub lists the default config first.
 */
const chooseSplit = (
  splits: ReadonlyArray<{ readonly config: string; readonly split: string }>,
  reference: HubReference
): { readonly config: string; readonly split: string } | undefined => {
  const candidates = reference.config === undefined ? splits : splits.filter((_) => _.config === reference.config)
  if (reference.split !== undefined) return candidates.find((_) => _.split === reference.split)
  return candidates.find((_) => _.split === "test") ?? candidates.find((_) => _.split === "validation") ?? candidates[0]
}

/** Our own byte limit, hit while streaming (the pool's limit surfaces as a `SafeHttpError`). */
class FileTooLarge extends Error {}

interface Answer {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: Buffer
}

const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

const safeHttpError = (error: unknown): SafeHttpError | undefined => {
  for (let inner = error; inner instanceof Error; inner = inner.cause) {
    if (inner instanceof SafeHttpError) return inner
  }
  return undefined
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`

/** Why an exchange with `who` failed, in words a user can act on; never the request's headers. */
const transportReason = (error: unknown, who: string, timeout: Duration.Duration, maxBytes: number): string => {
  if (error instanceof FileTooLarge) return `the dataset file is larger than ${mib(maxBytes)}`
  const safe = safeHttpError(error)
  if (safe?.reason === "BlockedAddress") return safe.message
  if (safe?.reason === "ResponseTooLarge") return `${who} sent more than the outbound response limit allows (${safe.message})`
  const code = errorCode(error)
  if (safe?.reason === "Timeout" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return `${who} did not answer within ${Duration.toSeconds(timeout)} s`
  }
  if (code === "UND_ERR_REDIRECT_MAX") return `${who} redirected too many times`
  return typeof code === "string" ? `could not reach ${who} (${code})` : `could not reach ${who}`
}

const headerOf = (headers: Dispatcher.ResponseData["headers"], name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

const make = Effect.fnUntraced(function*(options: RunDatasetSourceHttpOptions) {
  const { dispatcher } = yield* SafeHttp
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "60 seconds")
  const maxBytes = options.maxBytes ?? maxDatasetFileBytes
  const hubBase = options.hubBaseUrl?.replace(/\/+$/, "")

  /**
   * One GET over the guarded pool, its body read in full, but never more than `limit` bytes: the
   * download stops as soon as it passes the limit. Redirects are followed within the pool's limit,
   * each hop through the address guard.
   */
  const get = (url: URL, headers: Record<string, string>, limit: number, who: string) =>
    Effect.tryPromise({
      try: async (signal): Promise<Answer> => {
        const request: SafeRequestOptions = {
          origin: url.origin,
          path: url.pathname + url.search,
          method: "GET",
          headers,
          signal,
          deadlineMs: Duration.toMillis(timeout),
          // this reader enforces `limit` itself, with its own message
          maxResponseBytes: Number.POSITIVE_INFINITY
        }
        const response = await dispatcher.request(request)
        const declared = Number(headerOf(response.headers, "content-length"))
        if (declared > limit) {
          response.body.destroy()
          throw new FileTooLarge()
        }
        const chunks: Array<Buffer> = []
        let received = 0
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          received += chunk.length
          if (received > limit) {
            response.body.destroy()
            throw new FileTooLarge()
          }
          chunks.push(chunk)
        }
        return {
          status: response.statusCode,
          contentType: headerOf(response.headers, "content-type"),
          body: Buffer.concat(chunks)
        }
      },
      catch: (error) => transportReason(error, who, timeout, limit)
    })

  const fromFile = Effect.fnUntraced(function*(url: string) {
    const unavailable = (reason: string) => new DatasetUnavailable({ url, reason })
    const target = URL.parse(url)
    if (target === null) return yield* unavailable("the dataset URL is not a valid URL")
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      return yield* unavailable("the dataset URL must start with http:// or https://")
    }
    const answer = yield* get(target, { accept: "application/jsonl, application/json, text/csv, */*;q=0.5" }, maxBytes, "the dataset URL")
      .pipe(Effect.mapError(unavailable))
    if (answer.status < 200 || answer.status >= 300) return yield* unavailable(`the dataset URL answered ${answer.status}`)
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(answer.body)
    } catch {
      return yield* unavailable("the dataset file is not UTF-8 text")
    }
    const parsed = parseDatasetFile(text, { contentType: answer.contentType, url })
    if (Result.isFailure(parsed)) {
      const { line, message } = parsed.failure
      return yield* unavailable(line === undefined || message.startsWith(`Line ${line}`) ? message : `${message} (line ${line})`)
    }
    return parsed.success.rows
  })

  const fromHub = Effect.fnUntraced(function*(
    url: string,
    reference: HubReference,
    token: Option.Option<Redacted.Redacted<string>>
  ) {
    const unavailable = (reason: string) => new DatasetUnavailable({ url, reason })
    if (hubBase === undefined || hubBase === "") return yield* unavailable("the hub is not configured")
    const headers: Record<string, string> = { accept: "application/json" }
    if (Option.isSome(token)) headers.authorization = `Bearer ${Redacted.value(token.value)}`
    let received = 0
    const scrub = (text: string) => Option.isNone(token) ? text : redactSecret(text, Redacted.value(token.value))

    const call = <A>(path: string, params: Record<string, string>, schema: Schema.Codec<A, string>) =>
      Effect.gen(function*() {
        const target = URL.parse(`${hubBase}${path}?${new URLSearchParams(params)}`)
        if (target === null) return yield* unavailable("the hub's URL is not valid")
        // the pages together are held to a file's limit: a dataset read from the hub is no bigger
        const answer = yield* get(target, headers, maxBytes, "the hub").pipe(Effect.mapError(unavailable))
        received += answer.body.length
        if (received > maxBytes) return yield* unavailable(`the dataset's rows are larger than ${mib(maxBytes)}`)
        const text = answer.body.toString("utf8")
        // The hub answers 401 for private and missing datasets alike when it cannot show them.
        if (answer.status === 401 || answer.status === 403 || answer.status === 404) {
          return yield* unavailable(
            `the Hugging Face dataset ${reference.dataset} was not found or is not accessible` +
              (Option.isNone(token) ? " (the workspace has no hub token)" : " with the workspace's hub token")
          )
        }
        if (answer.status < 200 || answer.status >= 300) {
          const said = Result.getOrUndefined(Result.try(() => JSON.parse(text) as unknown))
          const error = typeof said === "object" && said !== null && "error" in said && typeof said.error === "string"
            ? `: ${scrub(said.error).slice(0, 200)}`
            : ""
          return yield* unavailable(`the hub answered ${answer.status}${error}`)
        }
        return yield* Schema.decodeUnknownEffect(schema)(text).pipe(
          Effect.mapError(() => unavailable("the hub sent an unexpected answer"))
        )
      })

    const { splits } = yield* call("/splits", { dataset: reference.dataset }, Splits)
    const chosen = chooseSplit(splits, reference)
    if (chosen === undefined) {
      const named = [reference.config, reference.split].filter((_) => _ !== undefined).join("/")
      return yield* unavailable(
        reference.config === undefined
          ? `the Hugging Face dataset ${reference.dataset} has no splits`
          : `the Hugging Face dataset ${reference.dataset} has no split ${named}`
      )
    }
    const page = (offset: number) =>
      call("/rows", {
        dataset: reference.dataset,
        config: chosen.config,
        split: chosen.split,
        offset: String(offset),
        length: String(pageLength)
      }, RowsPage)
    const first = yield* page(0)
    const total = first.num_rows_total
    const where = `${reference.dataset} (${chosen.config}/${chosen.split})`
    if (total > maxDatasetFileRows) {
      return yield* unavailable(`${where} has more than ${maxDatasetFileRows.toLocaleString("en")} rows`)
    }
    if (total === 0 || first.rows.length === 0) return yield* unavailable(`${where} has no rows`)
    const offsets: Array<number> = []
    for (let offset = pageLength; offset < total; offset += pageLength) offsets.push(offset)
    const rest = yield* Effect.forEach(offsets, page, { concurrency: pageConcurrency })
    return [first, ...rest].flatMap((_) => _.rows.map((row) => row.row))
  })

  const fetch = Effect.fn("RunDatasetSourceHttp.fetch")(function*(
    url: string,
    hubToken: Option.Option<Redacted.Redacted<string>>
  ): Effect.fn.Return<ReadonlyArray<Record<string, unknown>>, DatasetUnavailable> {
    const reference = hubReference(url)
    if (reference === "malformed") {
      return yield* new DatasetUnavailable({
        url,
        reason: "a Hugging Face dataset URL must name the dataset as /datasets/{owner}/{name}"
      })
    }
    return reference === undefined ? yield* fromFile(url) : yield* fromHub(url, reference, hubToken)
  })

  return RunDatasetSource.of({ fetch })
})

/**
 * GET dataset rows over the SSRF-guarded pool of `SafeHttp`: a file at the URL (JSONL, JSON or CSV,
 * streamed and cut off past `maxBytes`), or a Hugging Face dataset's split through the hub's
 * dataset-viewer API at `hubBaseUrl`, 100 rows a page, the workspace's hub token sent as a bearer.
 */
export const RunDatasetSourceHttp = {
  layer: (options: RunDatasetSourceHttpOptions): Layer.Layer<RunDatasetSource, never, SafeHttp> =>
    Layer.effect(RunDatasetSource, make(options))
}
