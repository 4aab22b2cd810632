import { Console, Data, Duration, Effect, Layer, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "@podium/adapters-http/api/Api"
import { ApiTokenAuth, PushAuth, SessionAuth } from "@podium/adapters-http/api/Security"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { maxSampleSeed } from "@podium/domain/runs"
import { type EvalCandidate, evalVerdict, formatP, rankingTable, resolveCandidate, servingCandidateOf } from "./EvalVerdict.ts"

/**
 * `podium eval`: a client for CI. It starts a run of a leaderboard on a running Podium (PODIUM_URL,
 * PODIUM_API_TOKEN) through the contract's typed client, shows its progress on stderr, prints the
 * ranking and the serving decision, and exits 1 when a `--candidate` is significantly worse than
 * the serving one (2: usage, an unreachable or refusing server, a run that did not succeed).
 */

/** A failure `podium eval` reports as one line and exit code 2. */
export class EvalStopped extends Data.TaggedError("EvalStopped")<{ readonly message: string }> {}

const stop = (message: string) => new EvalStopped({ message })

/** How often the run's status is read while it runs. */
const pollInterval = Duration.seconds(1)

/** `30m`, `90s`, `2h`, `500ms`: a duration for --timeout. */
const parseTimeout = (text: string): Duration.Duration | undefined => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim())
  if (match === null) return undefined
  const amount = Number(match[1])
  const unit = match[2] as "ms" | "s" | "m" | "h"
  return unit === "ms"
    ? Duration.millis(amount)
    : unit === "s"
    ? Duration.seconds(amount)
    : unit === "m"
    ? Duration.minutes(amount)
    : Duration.hours(amount)
}

const environment = (name: "PODIUM_URL" | "PODIUM_API_TOKEN") =>
  Effect.suspend(() => {
    const value = process.env[name]?.trim()
    return value === undefined || value === ""
      ? Effect.fail(stop(
        name === "PODIUM_URL"
          ? "PODIUM_URL is not set: set it to the Podium base URL, e.g. https://podium.example.com"
          : "PODIUM_API_TOKEN is not set: set it to an API token (pod_…) with the leaderboards:read and leaderboards:run scopes"
      ))
      : Effect.succeed(value)
  })

/** The contract error body of a refused call, whatever class decoded it. */
const errorBodyOf = (error: unknown): { readonly code: string; readonly message: string } | undefined => {
  const body = (error as { readonly error?: { readonly code?: unknown; readonly message?: unknown } } | null)?.error
  return typeof body?.code === "string" && typeof body.message === "string" ? { code: body.code, message: body.message } : undefined
}

/** One line saying why a call failed: the refusal's cause by status, or that Podium could not be reached. */
const explain = (url: string, status: number | undefined, error: unknown): string => {
  const body = errorBodyOf(error)
  const said = body === undefined ? "" : ` (${status ?? "?"} ${body.code}: ${body.message})`
  if (body === undefined || status === undefined) {
    const reason = error instanceof Error ? error.message : String(error)
    return status === undefined
      ? `cannot reach Podium at ${url}: ${reason}`
      : `Podium at ${url} answered ${status}, not what the contract says: ${reason}`
  }
  if (status === 401) return `Podium refused PODIUM_API_TOKEN: unknown, revoked or expired${said}`
  if (status === 403) return `PODIUM_API_TOKEN may not do this: it needs the leaderboards:read and leaderboards:run scopes in the leaderboard's workspace${said}`
  if (status === 404) return `not found: no such leaderboard (or run) in the token's workspace${said}`
  return `Podium refused the request${said}`
}

const progressLine = (run: { readonly id: string; readonly status: string; readonly progress: { readonly total: number; readonly completed: number; readonly failed: number } }) =>
  `run ${run.id}: ${run.status}, ${run.progress.completed}/${run.progress.total} cells` +
  (run.progress.failed > 0 ? `, ${run.progress.failed} failed` : "")

const program = (options: {
  readonly leaderboardId: string
  readonly candidates: ReadonlyArray<string>
  readonly sampleSize: Option.Option<number>
  readonly seed: Option.Option<number>
  readonly json: boolean
  readonly timeout: string
}) =>
  Effect.gen(function*() {
    // arguments first, then the environment, before any request
    const timeout = parseTimeout(options.timeout)
    if (timeout === undefined) return yield* stop(`--timeout ${options.timeout} is not a duration such as 30m, 90s or 2h`)
    if (Option.isSome(options.seed) && Option.isNone(options.sampleSize)) {
      return yield* stop("--seed needs --sample-size")
    }
    if (Option.isSome(options.sampleSize) && options.sampleSize.value < 1) return yield* stop("--sample-size must be at least 1")
    if (Option.isSome(options.seed) && (options.seed.value < 0 || options.seed.value > maxSampleSeed)) {
      return yield* stop(`--seed must be an integer in 0 … ${maxSampleSeed}`)
    }
    const leaderboardId = yield* Schema.decodeUnknownEffect(LeaderboardId)(options.leaderboardId).pipe(
      Effect.mapError(() => stop(`${options.leaderboardId} is not a leaderboard id (a UUID)`))
    )
    const url = (yield* environment("PODIUM_URL")).replace(/\/+$/, "")
    const token = yield* environment("PODIUM_API_TOKEN")
    if (!/^https?:\/\/[^/]/.test(url)) return yield* stop(`PODIUM_URL ${url} is not an http(s) URL`)

    // the typed client of the contract, with the token as bearer; the last status says why a call failed
    const last: { status: number | undefined } = { status: undefined }
    const bearer = HttpClientRequest.bearerToken(token)
    const client = yield* HttpApiClient.make(Api, {
      baseUrl: url,
      transformClient: (http) =>
        http.pipe(HttpClient.tap((response) => Effect.sync(() => (last.status = response.status))))
    }).pipe(
      Effect.provide(Layer.mergeAll(
        HttpApiMiddleware.layerClient(ApiTokenAuth, ({ next, request }) => next(bearer(request))),
        HttpApiMiddleware.layerClient(SessionAuth, ({ next, request }) => next(bearer(request))),
        HttpApiMiddleware.layerClient(PushAuth, ({ next, request }) => next(bearer(request))),
        FetchHttpClient.layer
      ))
    )
    const call = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        last.status = undefined
        return effect.pipe(Effect.mapError((error) => stop(explain(url, last.status, error))))
      })

    const { leaderboard, models } = yield* call(client.leaderboards.get({ params: { leaderboard_id: leaderboardId } }))
    const named: Array<EvalCandidate> = []
    for (const given of options.candidates) {
      const found = resolveCandidate(models, given)
      if (typeof found === "string") return yield* stop(found)
      if (!named.some((c) => c.id === found.id)) named.push(found)
    }

    const started = yield* call(client.runs.start({
      params: { leaderboard_id: leaderboardId },
      payload: Option.isSome(options.sampleSize)
        ? {
          sample: Option.isSome(options.seed)
            ? { size: options.sampleSize.value, seed: options.seed.value }
            : { size: options.sampleSize.value }
        }
        : null
    }))

    // progress on stderr: a line per change, or one line rewritten in place on a terminal
    const tty = process.stderr.isTTY === true
    let shown = ""
    const show = (line: string) =>
      Effect.sync(() => {
        if (line === shown) return
        shown = line
        process.stderr.write(tty ? `\r\x1b[K${line}` : `${line}\n`)
      })
    const endLine = Effect.sync(() => {
      if (tty && shown !== "") process.stderr.write("\n")
    })

    const get = call(client.runs.get({ params: { leaderboard_id: leaderboardId, run_id: started.run.id } }))
    const waitForEnd = Effect.gen(function*() {
      let run = started.run
      while (true) {
        yield* show(progressLine(run))
        if (run.status !== "queued" && run.status !== "running") return run
        yield* Effect.sleep(pollInterval)
        run = (yield* get).run
      }
    })
    const ended = yield* waitForEnd.pipe(Effect.timeoutOption(timeout), Effect.ensuring(endLine))
    if (Option.isNone(ended)) {
      // leave the leaderboard free for the next run: the cancel's own failure does not hide the timeout
      yield* call(client.runs.cancel({ params: { leaderboard_id: leaderboardId, run_id: started.run.id } })).pipe(Effect.ignore)
      return yield* stop(`run ${started.run.id} did not end within ${options.timeout}: cancelled`)
    }
    const run = ended.value
    if (run.status !== "succeeded") {
      return yield* stop(`run ${run.id} ${run.status}${run.error === null ? "" : `: ${run.error}`}`)
    }

    const verdict = evalVerdict(run, named, leaderboard.serving_policy.alpha)
    if (options.json) {
      yield* Console.log(JSON.stringify({ run, verdict }, null, 2))
    } else {
      const serving = servingCandidateOf(run.serving_decision)
      const nameOf = (id: string | null) => id === null ? "nothing" : run.results.find((r) => r.leaderboard_model_id === id)?.name ?? id
      const decision = run.serving_decision
      const lines = [
        `${leaderboard.name}: run ${run.id} succeeded (${run.results.length} candidates` +
        `${run.sample === null ? "" : `, sample of ${run.sample.size} rows, seed ${run.sample.seed}`})`,
        "",
        rankingTable(run.results, serving),
        "",
        decision === null
          ? "Serving decision: none recorded"
          : `Serving decision: ${decision.action}, ${nameOf(decision.from_candidate_id)} → ${nameOf(decision.to_candidate_id)}` +
            `${decision.p_value === null ? "" : ` (Holm ${formatP(decision.p_value)}, ${decision.shared_rows} shared rows)`}: ${decision.reason}`,
        ...verdict.candidates.map((c) => `${c.name}: ${c.note}`)
      ]
      yield* Console.log(lines.join("\n"))
    }
    return verdict.exit_code
  })

export const evalCommand = Command.make("eval", {
  leaderboardId: Argument.String("leaderboard_id").pipe(Argument.withDescription("The leaderboard to run")),
  candidates: Flag.String("candidate").pipe(
    Flag.atLeast(0),
    Flag.withDescription("A candidate (id or name) that must not be significantly worse than the serving one; repeatable")
  ),
  sampleSize: Flag.Int("sample-size").pipe(Flag.optional, Flag.withDescription("Ask a seeded sample of this many rows")),
  seed: Flag.Int("seed").pipe(Flag.optional, Flag.withDescription("The sample's seed (with --sample-size; drawn by the server without it)")),
  json: Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("Print the run and the verdict as JSON on stdout")),
  timeout: Flag.String("timeout").pipe(Flag.withDefault("30m"), Flag.withDescription("Give up (and cancel the run) after this long: 30m, 90s, 2h"))
}, (options) =>
  program(options).pipe(
    Effect.catchTag("EvalStopped", (error) => Effect.as(Console.error(`podium eval: ${error.message}`), 2 as const)),
    Effect.flatMap((code) => Effect.sync(() => {
      process.exitCode = code
    }))
  )).pipe(
    Command.withShortDescription("Run a leaderboard on a running Podium and judge candidates against the serving one (for CI)"),
    Command.withDescription(
      "Run a leaderboard on a running Podium and judge candidates against the serving one (for CI).\n\n" +
        "  Reads PODIUM_URL (the service's base URL) and PODIUM_API_TOKEN (an API token with leaderboards:read and\n" +
        "  leaderboards:run). Shows progress on stderr, prints the ranking with 95% intervals and the serving decision,\n" +
        "  and exits 1 when a --candidate is significantly worse than the serving candidate (Holm-adjusted McNemar p\n" +
        "  below the serving policy's alpha, more rows lost than won), 2 on a usage error, a refused or unreachable\n" +
        "  server, a run that failed or a timeout, else 0."
    )
  )
