import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export type FakeJobStatus = "validating_files" | "queued" | "running" | "succeeded" | "failed" | "cancelled"

export interface FakeEvent {
  readonly id: string
  /** Unix seconds. */
  readonly created_at: number
  readonly level: "info" | "warn" | "error"
  readonly message: string
  readonly type: "message" | "metrics"
  readonly data: Record<string, unknown> | null
}

export interface FakeJob {
  readonly id: string
  readonly created_at: number
  readonly model: string
  readonly training_file: string
  readonly validation_file: string | null
  readonly suffix: string | null
  readonly metadata: Record<string, string>
  /** `method` as sent, if any. */
  readonly method: unknown
  /** `method.supervised.hyperparameters` (or a legacy top-level `hyperparameters`), else `{}`. */
  readonly hyperparameters: Record<string, unknown>
  status: FakeJobStatus
  fine_tuned_model: string | null
  trained_tokens: number | null
  error: { readonly code: string; readonly message: string; readonly param: string | null } | null
  /** Oldest first; a test may push its own. */
  readonly events: Array<FakeEvent>
}

export interface ChatMessage {
  readonly role: string
  readonly content: string
}

/**
 * A loopback server speaking OpenAI's fine-tuning API (files, jobs, events, cancel) and chat
 * completions under `/v1`. Its state lives in the test process, so it outlives a Podium restart.
 */
export interface FineTuneFake {
  /** The root, without `/v1`. */
  readonly url: string
  /** `${url}/v1`, what `FINE_TUNE_BASE_URL` should be. */
  readonly baseUrl: string
  readonly files: Map<string, { readonly filename: string; readonly purpose: string; readonly content: string }>
  /** In creation order. */
  readonly jobs: Array<FakeJob>
  readonly createdJobs: number
  /** Every request, in order; `search` is the raw query (`?…`, or ""). */
  readonly requests: Array<{ readonly method: string; readonly path: string; readonly search: string }>
  /**
   * How a job moves when it is read (`GET /v1/fine_tuning/jobs/{id}`): `auto` one step per read
   * (validating_files, queued, running, succeeded); `hold` the same but stays running; `fail` to
   * failed with an `invalid_training_file` error.
   */
  mode: "auto" | "hold" | "fail"
  /** How long the answer to a job's creation is held back (the job is created at once): a caller may die waiting. */
  createDelayMs: number
  /** The next this many requests answer 503, as an overloaded service does. */
  unavailable: number
  /** What a chat completion answers; default `echo: <last user content>`. An `ft:` model no job produced is a 404. */
  answer: (model: string, messages: ReadonlyArray<ChatMessage>) => string
  /** The cost a chat completion reports (`usage.cost`, as OpenRouter does); default none. */
  usageCost: number | null
  readonly chats: Array<{ readonly model: string; readonly messages: ReadonlyArray<ChatMessage> }>
  /** Moves the job to succeeded, with its model, tokens and events. */
  readonly finish: (id: string) => void
  readonly failJob: (id: string, message: string) => void
  readonly close: () => Promise<void>
}

const defaultAnswer = (_model: string, messages: ReadonlyArray<ChatMessage>) =>
  `echo: ${messages.findLast((m) => m.role === "user")?.content ?? ""}`

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** An OpenAI-style error answer; thrown by a route, sent by the server. */
class HttpFailure {
  readonly status: number
  readonly message: string
  readonly code: string | null
  constructor(status: number, message: string, code: string | null = null) {
    this.status = status
    this.message = message
    this.code = code
  }
}

const openAiError = (status: number, message: string, code: string | null) => ({
  error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code }
})

export const startFineTuneFake = async (options: { readonly apiKey?: string } = {}): Promise<FineTuneFake> => {
  const apiKey = options.apiKey ?? "sk-fine-tune-test"
  let nextId = 0
  const newId = (prefix: string) => `${prefix}-${(++nextId).toString().padStart(6, "0")}`
  const now = () => Math.floor(Date.now() / 1000)

  const event = (job: FakeJob, message: string, more: Partial<FakeEvent> = {}) =>
    job.events.push({ id: newId("ftevent"), created_at: now(), level: "info", message, type: "message", data: null, ...more })

  const toRunning = (job: FakeJob) => {
    job.status = "running"
    event(job, "Fine-tuning job started")
  }
  const succeed = (job: FakeJob) => {
    if (job.status !== "running") toRunning(job)
    const training = fake.files.get(job.training_file)?.content ?? ""
    job.status = "succeeded"
    job.fine_tuned_model = `ft:${job.model}:podium:${job.suffix ?? "x"}:${job.id}`
    job.trained_tokens = Math.ceil(training.length / 4)
    event(job, "Step 1/1: training loss=0.42", {
      type: "metrics",
      data: { step: 1, train_loss: 0.42, train_mean_token_accuracy: 0.87 }
    })
    event(job, `New fine-tuned model created: ${job.fine_tuned_model}`)
    event(job, "The job has successfully completed")
  }
  const fail = (job: FakeJob, message: string) => {
    job.status = "failed"
    job.error = { code: "invalid_training_file", message, param: "training_file" }
    event(job, message, { level: "error" })
  }
  const isDone = (job: FakeJob) => job.status === "succeeded" || job.status === "failed" || job.status === "cancelled"

  /** One step of the job, as a read of it sees. */
  const advance = (job: FakeJob) => {
    if (isDone(job)) return
    if (fake.mode === "fail") return fail(job, "The training file has invalid lines: line 1 is not a chat example")
    if (job.status === "validating_files") job.status = "queued"
    else if (job.status === "queued") toRunning(job)
    else if (fake.mode === "auto") succeed(job)
  }

  const jobJson = (job: FakeJob) => ({
    object: "fine_tuning.job",
    id: job.id,
    model: job.model,
    created_at: job.created_at,
    finished_at: isDone(job) ? now() : null,
    fine_tuned_model: job.fine_tuned_model,
    organization_id: "org-podium",
    result_files: [],
    status: job.status,
    validation_file: job.validation_file,
    training_file: job.training_file,
    hyperparameters: job.hyperparameters,
    trained_tokens: job.trained_tokens,
    error: job.error,
    user_provided_suffix: job.suffix,
    seed: 42,
    estimated_finish: null,
    integrations: [],
    metadata: job.metadata,
    method: job.method ?? { type: "supervised", supervised: { hyperparameters: job.hyperparameters } }
  })

  const jobOf = (id: string) => {
    const job = fake.jobs.find((j) => j.id === id)
    if (job === undefined) throw new HttpFailure(404, `No such fine-tuning job: ${id}`, "fine_tune_not_found")
    return job
  }

  /** A cursor page of `items` (newest first) after the one whose id is `after`. */
  const page = <A extends { readonly id: string }>(items: ReadonlyArray<A>, query: URLSearchParams) => {
    const limit = Math.min(Math.max(Number(query.get("limit") ?? 20) || 20, 1), 100)
    const after = query.get("after")
    const start = after === null ? 0 : items.findIndex((item) => item.id === after) + 1
    const data = items.slice(start, start + limit)
    return { object: "list", data, has_more: start + limit < items.length }
  }

  const upload = async (req: IncomingMessage, raw: Buffer) => {
    const form = await new Request("http://fake/", {
      method: "POST",
      headers: { "content-type": req.headers["content-type"] ?? "" },
      body: raw
    }).formData().catch(() => {
      throw new HttpFailure(400, "Expected a multipart/form-data body")
    })
    const purpose = form.get("purpose")
    const file = form.get("file")
    if (purpose !== "fine-tune") throw new HttpFailure(400, `Invalid purpose: ${String(purpose)}`)
    if (!(file instanceof File)) throw new HttpFailure(400, "Missing file")
    const id = newId("file")
    const content = await file.text()
    fake.files.set(id, { filename: file.name, purpose, content })
    return {
      object: "file",
      id,
      purpose,
      filename: file.name,
      bytes: Buffer.byteLength(content),
      created_at: now(),
      status: "processed"
    }
  }

  const create = (body: Record<string, unknown>) => {
    const text = (name: string) => (typeof body[name] === "string" ? body[name] : null)
    const model = text("model")
    if (model === null || model === "") throw new HttpFailure(400, "Missing required parameter: 'model'.")
    const training_file = text("training_file")
    const validation_file = text("validation_file")
    if (training_file === null || !fake.files.has(training_file)) {
      throw new HttpFailure(400, `invalid training_file: ${String(training_file)}`)
    }
    if (validation_file !== null && !fake.files.has(validation_file)) {
      throw new HttpFailure(400, `invalid validation_file: ${validation_file}`)
    }
    const method = body.method
    const supervised = isRecord(method) && isRecord(method.supervised) ? method.supervised.hyperparameters : undefined
    const hyperparameters = supervised ?? body.hyperparameters
    const job: FakeJob = {
      id: newId("ftjob"),
      created_at: now(),
      model,
      training_file,
      validation_file,
      suffix: text("suffix"),
      metadata: isRecord(body.metadata) ? (body.metadata as Record<string, string>) : {},
      method,
      hyperparameters: isRecord(hyperparameters) ? hyperparameters : {},
      status: "validating_files",
      fine_tuned_model: null,
      trained_tokens: null,
      error: null,
      events: []
    }
    event(job, "Validating training file")
    fake.jobs.push(job)
    fake.createdJobs++
    return jobJson(job)
  }

  const list = (query: URLSearchParams) => {
    const filters = [...query].flatMap(([name, value]) => {
      const key = /^metadata\[(.+)\]$/.exec(name)?.[1]
      return key === undefined ? [] : [[key, value] as const]
    })
    const matching = fake.jobs.filter((job) => filters.every(([key, value]) => job.metadata[key] === value))
    return page(matching.toReversed().map(jobJson), query)
  }

  const cancel = (job: FakeJob) => {
    if (isDone(job)) throw new HttpFailure(400, `Job has already ${job.status}: ${job.id}`)
    job.status = "cancelled"
    event(job, "Fine-tuning job cancelled")
    return jobJson(job)
  }

  const chat = (body: Record<string, unknown>) => {
    const model = typeof body.model === "string" ? body.model : ""
    const messages = Array.isArray(body.messages) ? (body.messages as Array<ChatMessage>) : []
    const tuned = fake.jobs.some((job) => job.status === "succeeded" && job.fine_tuned_model === model)
    if (model === "" || (model.startsWith("ft:") && !tuned)) {
      throw new HttpFailure(404, `The model \`${model}\` does not exist or you do not have access to it.`, "model_not_found")
    }
    fake.chats.push({ model, messages })
    const content = fake.answer(model, messages)
    const prompt_tokens = Math.ceil(messages.reduce((n, m) => n + String(m.content).length, 0) / 4)
    const completion_tokens = Math.ceil(content.length / 4)
    return {
      id: newId("chatcmpl"),
      object: "chat.completion",
      created: now(),
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: {
        prompt_tokens,
        completion_tokens,
        total_tokens: prompt_tokens + completion_tokens,
        ...(fake.usageCost === null ? {} : { cost: fake.usageCost })
      }
    }
  }

  const route = async (req: IncomingMessage, raw: Buffer, path: string, query: URLSearchParams): Promise<unknown> => {
    const authorization = req.headers.authorization
    if (authorization === undefined) throw new HttpFailure(401, "You didn't provide an API key.")
    if (authorization !== `Bearer ${apiKey}`) {
      // OpenAI quotes the key it was given; the adapter must not pass it on
      const sent = authorization.replace(/^Bearer /, "")
      throw new HttpFailure(401, `Incorrect API key provided: ${sent}.`, "invalid_api_key")
    }
    if (fake.unavailable > 0) {
      fake.unavailable--
      throw new HttpFailure(503, "The server is overloaded or not ready yet.")
    }
    const json = (): Record<string, unknown> => {
      try {
        const body: unknown = JSON.parse(raw.toString("utf8"))
        if (isRecord(body)) return body
      } catch {
        // answered below
      }
      throw new HttpFailure(400, "We could not parse the JSON body of your request.")
    }
    const [, jobId, action = ""] = /^\/fine_tuning\/jobs\/([^/]+)(\/events|\/cancel)?$/.exec(path) ?? []
    if (jobId !== undefined) {
      const job = jobOf(decodeURIComponent(jobId))
      switch (`${req.method} ${action}`) {
        case "GET ":
          advance(job)
          return jobJson(job)
        case "GET /events":
          return page(job.events.toReversed().map((e) => ({ object: "fine_tuning.job.event", ...e })), query)
        case "POST /cancel":
          return cancel(job)
      }
    }
    switch (`${req.method} ${path}`) {
      case "POST /files":
        return upload(req, raw)
      case "POST /fine_tuning/jobs": {
        // the job exists from here on, whether or not its answer ever reaches the caller
        const job = create(json())
        if (fake.createDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.createDelayMs))
        return job
      }
      case "GET /fine_tuning/jobs":
        return list(query)
      case "POST /chat/completions":
        return chat(json())
      default:
        throw new HttpFailure(404, `Invalid URL (${req.method} /v1${path})`)
    }
  }

  const fake = {
    files: new Map(),
    jobs: [],
    createdJobs: 0,
    requests: [],
    mode: "auto",
    unavailable: 0,
    createDelayMs: 0,
    answer: defaultAnswer,
    usageCost: null,
    chats: [],
    finish: (id: string) => succeed(jobOf(id)),
    failJob: (id: string, message: string) => fail(jobOf(id), message)
  } as unknown as { -readonly [K in keyof FineTuneFake]: FineTuneFake[K] }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake")
      fake.requests.push({ method: req.method ?? "GET", path: url.pathname, search: url.search })
      const send = (status: number, body: unknown) => {
        if (res.destroyed) return // the caller went away (a killed server)
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
      }
      const answer = url.pathname.startsWith("/v1/")
        ? route(req, Buffer.concat(chunks), url.pathname.slice(3), url.searchParams)
        : Promise.reject(new HttpFailure(404, `Invalid URL (${req.method} ${url.pathname})`))
      answer.then(
        (body) => send(200, body),
        (error: unknown) =>
          error instanceof HttpFailure
            ? send(error.status, openAiError(error.status, error.message, error.code))
            : send(500, openAiError(500, String(error), null))
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.baseUrl = `${fake.url}/v1`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}
