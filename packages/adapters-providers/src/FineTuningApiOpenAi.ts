import type { ChatTarget } from "@podium/domain/inference"
import {
  type CreateJob,
  FineTuningApi,
  FineTuningFailed,
  type RemoteEvent,
  type RemoteJob,
  type RemoteJobStatus
} from "@podium/domain/models"
import { storableText } from "@podium/domain/shared"
import { type Cause, DateTime, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import { redactSecret } from "./Redaction.ts"
import { SafeHttpError } from "./SafeHttpClient.ts"

export interface FineTuningApiOpenAiOptions {
  /** OpenAI-style API root, e.g. `https://api.openai.com/v1`; unset means fine-tuning is not offered. */
  readonly baseUrl?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** Bounds one request, body included. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
}

// OpenAI's fine-tuning job: `error` is `{code, message, param}` or null.
const Job = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  created_at: Schema.optional(Schema.NullOr(Schema.Number)),
  fine_tuned_model: Schema.optional(Schema.NullOr(Schema.String)),
  trained_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  error: Schema.optional(Schema.NullOr(Schema.Struct({
    code: Schema.optional(Schema.NullOr(Schema.String)),
    message: Schema.optional(Schema.NullOr(Schema.String))
  }))),
  metadata: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
type Job = typeof Job.Type

const Uploaded = Schema.Struct({ id: Schema.String })
const JobList = Schema.Struct({ data: Schema.Array(Job) })
// Newest first; `after` (the last id of a page) asks for the page of older events.
const EventPage = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    id: Schema.String,
    created_at: Schema.Number,
    level: Schema.optional(Schema.NullOr(Schema.String)),
    message: Schema.optional(Schema.NullOr(Schema.String)),
    type: Schema.optional(Schema.NullOr(Schema.String)),
    data: Schema.optional(Schema.Unknown)
  })),
  has_more: Schema.optional(Schema.Boolean)
})
const ErrorBody = Schema.fromJsonString(Schema.Struct({
  error: Schema.Union([Schema.String, Schema.Struct({ message: Schema.optional(Schema.NullOr(Schema.String)) })])
}))

const statuses: Readonly<Record<string, RemoteJobStatus>> = {
  validating_files: "queued",
  queued: "queued",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled"
}

const maxEventPages = 20

/** 408, 409, 429 and 5xx may pass; another 4xx is the request's fault and will not. */
const isRetryable = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

const safeHttpError = (error: unknown): SafeHttpError | undefined => {
  for (let inner = error; inner instanceof Error; inner = inner.cause) {
    if (inner instanceof SafeHttpError) return inner
  }
  return undefined
}

/** Finite numbers only: a metrics event may also carry names, nulls or NaN. */
const metricsOf = (data: unknown): Readonly<Record<string, number>> | null => {
  if (typeof data !== "object" || data === null) return null
  const metrics = Object.entries(data).filter(
    (entry): entry is [string, number] => typeof entry[1] === "number" && Number.isFinite(entry[1])
  )
  return metrics.length === 0 ? null : Object.fromEntries(metrics)
}

const isoOfUnixSeconds = (seconds: number): string =>
  Option.match(DateTime.make(seconds * 1000), { onNone: () => new Date(0).toISOString(), onSome: DateTime.formatIso })

const make = Effect.fnUntraced(function*(options: FineTuningApiOpenAiOptions) {
  const client = yield* HttpClient.HttpClient
  const base = options.baseUrl?.replace(/\/+$/, "") || undefined
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "60 seconds")
  const apiKey = Option.fromUndefinedOr(options.apiKey)
  /**
   * An upstream error message, made safe to show and store: never the key in any form (OpenAI
   * quotes a refused key), never text Postgres refuses. Only error bodies are scrubbed: a key can
   * share a run of characters with ordinary words ("fine-tune"), which scrubbing would mangle.
   */
  const theirs = (text: string) =>
    storableText(Option.match(apiKey, { onNone: () => text, onSome: (k) => redactSecret(text, Redacted.value(k)) }).slice(0, 300))
  const failed = (reason: string, status: number | null, retryable: boolean) => new FineTuningFailed({ reason, status, retryable })

  const transportFailure = (error: HttpClientError.HttpClientError | Cause.TimeoutError) => {
    const safe = safeHttpError(error)
    if (safe?.reason === "BlockedAddress") return failed(safe.message, null, false)
    return error._tag === "TimeoutError" || safe?.reason === "Timeout"
      ? failed(`the fine-tuning service did not answer within ${Duration.toSeconds(timeout)} s`, null, true)
      : failed("could not reach the fine-tuning service", null, true)
  }

  /** Sends the request and decodes a 2xx answer; any other answer is FineTuningFailed with the upstream's words. */
  const send = <S extends Schema.Decoder<unknown>>(
    request: HttpClientRequest.HttpClientRequest,
    schema: S
  ): Effect.Effect<S["Type"], FineTuningFailed> => {
    if (base === undefined) return Effect.fail(failed("FINE_TUNE_BASE_URL is not set", null, false))
    const authorized = Option.match(apiKey, {
      onNone: () => request,
      onSome: (k) => HttpClientRequest.bearerToken(request, k)
    })
    return client.execute(HttpClientRequest.acceptJson(authorized)).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (body) => ({ status: response.status, body }))),
      Effect.timeout(timeout),
      Effect.mapError(transportFailure),
      Effect.flatMap(({ body, status }) => {
        if (status < 200 || status >= 300) {
          const error = Option.getOrUndefined(Schema.decodeUnknownOption(ErrorBody)(body))?.error
          const message = typeof error === "string" ? error : error?.message
          const said = message ? `: ${theirs(message)}` : ""
          return Effect.fail(failed(`the fine-tuning service answered ${status}${said}`, status, isRetryable(status)))
        }
        return Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(body).pipe(
          // a garbled answer (a proxy's page, a cut body) is worth asking again
          Effect.mapError(() => failed("the fine-tuning service sent an unreadable answer", status, true))
        )
      })
    )
  }
  const url = (path: string) => `${base}${path}`
  const jobPath = (id: string) => `/fine_tuning/jobs/${encodeURIComponent(id)}`

  const remoteJob = (job: Job): Effect.Effect<RemoteJob, FineTuningFailed> => {
    const status = statuses[job.status]
    if (status === undefined) {
      return Effect.fail(failed(`job ${job.id} has an unknown status "${storableText(job.status.slice(0, 50))}"`, null, false))
    }
    const error = job.error?.message ?? job.error?.code ?? null
    return Effect.succeed({
      id: job.id,
      status,
      fine_tuned_model: job.fine_tuned_model ?? null,
      trained_tokens: job.trained_tokens ?? null,
      error: error === null ? null : theirs(error)
    })
  }

  const upload = Effect.fn("FineTuningApiOpenAi.upload")(function*(filename: string, jsonl: string) {
    const form = new FormData()
    form.append("purpose", "fine-tune")
    form.append("file", new Blob([jsonl], { type: "application/jsonl" }), filename)
    const file = yield* send(HttpClientRequest.post(url("/files")).pipe(HttpClientRequest.bodyFormData(form)), Uploaded)
    return file.id
  })

  const create = Effect.fn("FineTuningApiOpenAi.create")(function*(job: CreateJob) {
    const body = {
      model: job.model,
      training_file: job.training_file,
      ...(job.validation_file === null ? {} : { validation_file: job.validation_file }),
      ...(job.suffix === null ? {} : { suffix: job.suffix }),
      metadata: job.metadata,
      ...(job.hyperparameters === null
        ? {}
        : { method: { type: "supervised", supervised: { hyperparameters: job.hyperparameters } } })
    }
    const request = HttpClientRequest.post(url("/fine_tuning/jobs")).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    return yield* remoteJob(yield* send(request, Job))
  })

  const findByMetadata = Effect.fn("FineTuningApiOpenAi.findByMetadata")(function*(key: string, value: string) {
    const request = HttpClientRequest.get(url("/fine_tuning/jobs")).pipe(
      HttpClientRequest.setUrlParam("limit", "100"),
      HttpClientRequest.setUrlParam(`metadata[${key}]`, value)
    )
    const { data } = yield* send(request, JobList)
    // a compatible service may ignore the filter, so it is applied here too
    const matching = data.filter((job) => job.metadata?.[key] === value)
    const newest = matching.reduce<Job | undefined>(
      (best, job) => best === undefined || (job.created_at ?? 0) > (best.created_at ?? 0) ? job : best,
      undefined
    )
    return newest === undefined ? Option.none() : Option.some(yield* remoteJob(newest))
  })

  const job = Effect.fn("FineTuningApiOpenAi.job")(function*(id: string) {
    return yield* remoteJob(yield* send(HttpClientRequest.get(url(jobPath(id))), Job))
  })

  const events = Effect.fn("FineTuningApiOpenAi.events")(function*(id: string) {
    const newestFirst: Array<typeof EventPage.Type.data[number]> = []
    const seen = new Set<string>()
    let after: string | undefined
    for (let page = 0; page < maxEventPages; page++) {
      const request = HttpClientRequest.get(url(`${jobPath(id)}/events`)).pipe(
        HttpClientRequest.setUrlParam("limit", "100"),
        after === undefined ? (r) => r : HttpClientRequest.setUrlParam("after", after)
      )
      const { data, has_more } = yield* send(request, EventPage)
      const fresh = data.filter((event) => !seen.has(event.id))
      for (const event of fresh) seen.add(event.id)
      newestFirst.push(...fresh)
      // a service that ignores `after` sends the same page again: nothing new means the end
      if (has_more !== true || fresh.length === 0) break
      after = data[data.length - 1]?.id
    }
    return newestFirst.reverse().map((event): RemoteEvent => ({
      id: event.id,
      created_at: isoOfUnixSeconds(event.created_at),
      level: event.level ?? "info",
      message: theirs(event.message ?? ""),
      metrics: event.type === "metrics" ? metricsOf(event.data) : null
    }))
  })

  const cancel = Effect.fn("FineTuningApiOpenAi.cancel")(function*(id: string) {
    yield* send(HttpClientRequest.post(url(`${jobPath(id)}/cancel`)), Schema.Unknown)
  })

  const chatTarget = (model: string): ChatTarget => ({
    candidateId: `fine-tune:${model}`,
    candidateName: model,
    platform: "Custom",
    modelName: model,
    url: base ?? null,
    authType: "bearer",
    authHeaderName: null,
    token: apiKey,
    inputPricePerMTokens: null,
    outputPricePerMTokens: null
  })

  return FineTuningApi.of({ configured: base !== undefined, upload, create, findByMetadata, job, events, cancel, chatTarget })
})

/** OpenAI's fine-tuning API (files, jobs, events) over the given `HttpClient`; its key stays out of every error. */
export const FineTuningApiOpenAi = {
  layer: (options: FineTuningApiOpenAiOptions): Layer.Layer<FineTuningApi, never, HttpClient.HttpClient> =>
    Layer.effect(FineTuningApi, make(options))
}
