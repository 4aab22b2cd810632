import { DateTime, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type Candidate, type Leaderboard, Leaderboards, servingPolicyOf } from "@podium/domain/leaderboards"
import { Runs, runView } from "@podium/domain/runs"
import { Api } from "../api/Api.ts"
import { type CandidateView, type LeaderboardView, UpdateLeaderboardRequest } from "./LeaderboardsApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

/** Known fields win over stored unknown ones of the same name. */
export const leaderboardView = (l: Leaderboard): typeof LeaderboardView.Type => ({
  ...l.extra as typeof LeaderboardView.Type,
  id: l.id,
  business_id: l.workspace_id,
  name: l.name,
  description: l.description,
  status: l.status,
  dataset_type: l.challenge.dataset_type,
  dataset_url: l.challenge.dataset_url,
  eval_type: l.challenge.eval_type,
  chosen_model_strategy: l.chosen_model_strategy,
  chosen_leaderboard_model_id: l.chosen_leaderboard_model_id,
  schedule: l.schedule as typeof LeaderboardView.Type["schedule"],
  serving_policy: servingPolicyOf(l),
  created_at: DateTime.formatIso(l.created_at),
  updated_at: DateTime.formatIso(l.updated_at)
})

const candidateView = (c: Candidate): typeof CandidateView.Type => ({ ...c })

const withChallenge = (l: Leaderboard) => ({ leaderboard: leaderboardView(l), challenge: l.challenge })

/** What the open update request declares; every other property it carries is the leaderboard's extra. */
const updateFields: ReadonlySet<string> = new Set(Object.keys(UpdateLeaderboardRequest.schema.fields))

export const LeaderboardsHttp = HttpApiBuilder.group(
  Api,
  "leaderboards",
  Effect.fn(function*(handlers) {
    const leaderboards = yield* Leaderboards
    const runs = yield* Runs
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const limit = query.limit ?? 100
          const offset = query.offset ?? 0
          const page = yield* leaderboards.list(yield* CurrentPrincipal, {
            limit: limit + 1,
            offset,
            business_id: query.business_id
          })
          return {
            leaderboards: page.slice(0, limit).map(leaderboardView),
            next_offset: page.length > limit ? offset + limit : null
          }
        }).pipe(mapDomainErrors))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          return withChallenge(yield* leaderboards.create(yield* CurrentPrincipal, payload))
        }).pipe(mapDomainErrors))
      .handle("get", ({ params }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const detail = yield* leaderboards.get(principal, params.leaderboard_id)
          const recent = yield* runs.list(principal, params.leaderboard_id, { limit: 20, offset: 0 })
          return { ...withChallenge(detail.leaderboard), models: detail.candidates.map(candidateView), runs: recent.map(runView) }
        }).pipe(mapDomainErrors))
      .handle("update", ({ params, payload }) =>
        Effect.gen(function*() {
          const extra = Object.fromEntries(Object.entries(payload).filter(([key]) => !updateFields.has(key)))
          const updated = yield* leaderboards.update(yield* CurrentPrincipal, params.leaderboard_id, { ...payload, extra })
          return withChallenge(updated)
        }).pipe(mapDomainErrors))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          yield* leaderboards.remove(yield* CurrentPrincipal, params.leaderboard_id)
          return { id: params.leaderboard_id, deleted: true as const }
        }).pipe(mapDomainErrors))
      .handle("listModels", ({ params }) =>
        Effect.gen(function*() {
          const detail = yield* leaderboards.get(yield* CurrentPrincipal, params.leaderboard_id)
          return { models: detail.candidates.map(candidateView) }
        }).pipe(mapDomainErrors))
      .handle("addModel", ({ params, payload }) =>
        Effect.gen(function*() {
          const candidate = yield* leaderboards.addCandidate(yield* CurrentPrincipal, params.leaderboard_id, payload)
          return { model: candidateView(candidate) }
        }).pipe(mapDomainErrors))
      .handle("removeModel", ({ params }) =>
        Effect.gen(function*() {
          yield* leaderboards.removeCandidate(
            yield* CurrentPrincipal,
            params.leaderboard_id,
            params.leaderboard_model_id
          )
          return { id: params.leaderboard_model_id, deleted: true as const }
        }).pipe(mapDomainErrors))
      .handle("servingHistory", ({ params, query }) =>
        Effect.gen(function*() {
          const page = yield* leaderboards.servingHistory(yield* CurrentPrincipal, params.leaderboard_id, {
            limit: query.limit ?? 20,
            cursor: query.cursor
          })
          return { data: page.entries, next_cursor: page.next_cursor }
        }).pipe(mapDomainErrors))
      .handle("rollback", ({ params }) =>
        Effect.gen(function*() {
          const done = yield* leaderboards.rollback(yield* CurrentPrincipal, params.leaderboard_id)
          return { leaderboard: leaderboardView(done.leaderboard), serving_candidate_id: done.serving, entry: done.entry }
        }).pipe(mapDomainErrors))
  })
)
