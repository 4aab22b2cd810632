import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { DatasetImprovements, improvementView, type ResultRow, Runs, runView } from "@podium/domain/runs"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { onePage, page } from "../handlers/Paging.ts"


const rowView = (row: ResultRow) => ({
  index: row.index,
  input: row.input,
  reference: row.reference,
  results: row.cells.map((cell) => ({
    leaderboard_model_id: cell.candidate_id,
    output: cell.output,
    verdict: cell.verdict,
    reason: cell.reason,
    error: cell.error,
    latency_ms: cell.latency_ms,
    cost_usd: cell.cost_usd
  }))
})

export const RunsHttp = HttpApiBuilder.group(
  Api,
  "runs",
  Effect.fn(function*(handlers) {
    const runs = yield* Runs
    const improvements = yield* DatasetImprovements
    return handlers
      .handle("start", ({ params, payload }) =>
        Effect.gen(function*() {
          return { run: runView(yield* runs.start(yield* CurrentPrincipal, params.leaderboard_id, payload ?? {})) }
        }).pipe(mapDomainErrors))
      .handle("list", ({ params, query }) =>
        Effect.gen(function*() {
          const asked = page(query)
          const found = yield* runs.list(yield* CurrentPrincipal, params.leaderboard_id, { ...asked, limit: asked.limit + 1 })
          const { items, next_offset } = onePage(found, asked)
          return { runs: items.map(runView), next_offset }
        }).pipe(mapDomainErrors))
      .handle("get", ({ params }) =>
        Effect.gen(function*() {
          return { run: runView(yield* runs.get(yield* CurrentPrincipal, params.leaderboard_id, params.run_id)) }
        }).pipe(mapDomainErrors))
      .handle("results", ({ params, query }) =>
        Effect.gen(function*() {
          const asked = page(query)
          const { rows } = yield* runs.results(yield* CurrentPrincipal, params.leaderboard_id, params.run_id, {
            ...asked,
            limit: asked.limit + 1
          })
          const { items, next_offset } = onePage(rows, asked)
          return { run_id: params.run_id, rows: items.map(rowView), next_offset }
        }).pipe(mapDomainErrors))
      .handle("improveDataset", ({ params, payload }) =>
        Effect.gen(function*() {
          const job = yield* improvements.start(yield* CurrentPrincipal, params.leaderboard_id, payload ?? {})
          return { improvement: improvementView(job) }
        }).pipe(mapDomainErrors))
      .handle("improvement", ({ params }) =>
        Effect.gen(function*() {
          const job = yield* improvements.latest(yield* CurrentPrincipal, params.leaderboard_id)
          return { improvement: job._tag === "Some" ? improvementView(job.value) : null }
        }).pipe(mapDomainErrors))
      .handle("agreement", ({ params }) =>
        Effect.gen(function*() {
          return yield* runs.agreement(yield* CurrentPrincipal, params.leaderboard_id, params.run_id)
        }).pipe(mapDomainErrors))
      .handle("cancel", ({ params }) =>
        Effect.gen(function*() {
          return { run: runView(yield* runs.cancel(yield* CurrentPrincipal, params.leaderboard_id, params.run_id)) }
        }).pipe(mapDomainErrors))
  })
)
