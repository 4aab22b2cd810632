import { assert, describe, layer } from "@effect/vitest"
import { Candidate, challengeOf, CandidateId, Leaderboard, LeaderboardId, LeaderboardRepository } from "@podium/domain/leaderboards"
import type { WorkspaceId } from "@podium/domain/shared"
import { Context, DateTime, Effect, Exit, type Layer, Option } from "effect"

/** A workspace for leaderboards to belong to: the one thing the port needs that it does not own. */
export class ContractWorkspaces extends Context.Service<ContractWorkspaces, {
  readonly make: Effect.Effect<WorkspaceId>
}>()("@podium/test/contracts/ContractWorkspaces") {}

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const t1 = DateTime.makeUnsafe("2026-11-22T11:00:00.000Z")

export const aLeaderboard = (workspace: WorkspaceId, id = LeaderboardId.make(crypto.randomUUID())) =>
  new Leaderboard({
    id,
    workspace_id: workspace,
    name: "Support answers",
    description: "",
    status: "active",
    chosen_model_strategy: "ranking_winner",
    chosen_leaderboard_model_id: null,
    schedule: { cron: "0 * * * *" },
    challenge: challengeOf({ dataset_type: "PUSH", system_prompt: "Be brief." }),
    extra: { color: "blue" },
    created_at: t0,
    updated_at: t0,
    version: 1
  })

const aCandidate = (leaderboard: Leaderboard, id = CandidateId.make(crypto.randomUUID())) =>
  new Candidate({
    id,
    leaderboard_id: leaderboard.id,
    name: "self-hosted",
    platform: "Custom",
    model_name: null,
    model_url: null,
    url: "https://models.example.com/v1",
    model_id: null,
    auth_type: "none",
    auth_header_name: null,
    has_token: false,
    input_price_per_m_tokens: null,
    output_price_per_m_tokens: 2.5,
    created_at: t0
  })

/** What an update computed from `l` writes: the next version. */
const changed = (l: Leaderboard, fields: Partial<Leaderboard>) =>
  new Leaderboard({ ...l, ...fields, updated_at: t1, version: l.version + 1 })

/** A stored leaderboard in a workspace of its own, with `candidates` candidates. */
const stored = (candidates = 0) =>
  Effect.gen(function*() {
    const repository = yield* LeaderboardRepository
    const leaderboard = aLeaderboard(yield* (yield* ContractWorkspaces).make)
    yield* repository.insert(leaderboard)
    const added = Array.from({ length: candidates }, () => aCandidate(leaderboard)).sort((a, b) => a.id < b.id ? -1 : 1)
    yield* repository.insertCandidates(added.map((candidate) => ({ candidate, sealedToken: null })))
    return { repository, leaderboard, candidates: added }
  })

const found = (id: LeaderboardId) => Effect.flatMap(LeaderboardRepository, (r) => Effect.map(r.find(id), Option.getOrUndefined))

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `LeaderboardRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const leaderboardRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<LeaderboardRepository | ContractWorkspaces, unknown>
) =>
  describe(`LeaderboardRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("finds what it inserted, by id from any workspace; an unknown id is none", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored()
          assert.deepStrictEqual(yield* found(leaderboard.id), leaderboard)
          assert.isTrue(Option.isNone(yield* repository.find(LeaderboardId.make(crypto.randomUUID()))))
        }))

      it.effect("lists a workspace's own leaderboards, highest id first, by page", () =>
        Effect.gen(function*() {
          const repository = yield* LeaderboardRepository
          const workspaces = yield* ContractWorkspaces
          const [mine, theirs] = [yield* workspaces.make, yield* workspaces.make]
          const leaderboards = Array.from({ length: 5 }, () => aLeaderboard(mine))
          for (const l of [...leaderboards, aLeaderboard(theirs)]) yield* repository.insert(l)
          const newestFirst = leaderboards.map((l) => l.id).sort().reverse()
          const page = (offset: number, limit: number) =>
            Effect.map(repository.list(mine, { offset, limit }), (ls) => ls.map((l) => l.id))
          assert.deepStrictEqual(yield* page(0, 10), newestFirst)
          assert.deepStrictEqual(yield* page(1, 2), newestFirst.slice(1, 3))
          assert.deepStrictEqual(yield* page(5, 2), [])
        }))

      it.effect("updates only from the version it was computed from: the loser of a race gets false", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored()
          const renamed = changed(leaderboard, { name: "renamed", extra: { color: "red" } })
          assert.isTrue(yield* repository.update(renamed))
          assert.deepStrictEqual(yield* found(leaderboard.id), renamed)
          // computed from the same (now old) version: refused, and nothing of it is written
          assert.isFalse(yield* repository.update(changed(leaderboard, { description: "lost" })))
          // nor a version skipped
          assert.isFalse(yield* repository.update(new Leaderboard({ ...renamed, name: "skipped", version: renamed.version + 2 })))
          assert.deepStrictEqual(yield* found(leaderboard.id), renamed)
        }))

      it.effect("of many concurrent updates from one version, exactly one lands", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored()
          const attempts = Array.from({ length: 8 }, (_, i) => changed(leaderboard, { description: `writer ${i}` }))
          const landed = yield* Effect.forEach(attempts, repository.update, { concurrency: "unbounded" })
          assert.strictEqual(landed.filter(Boolean).length, 1)
          assert.deepStrictEqual(yield* found(leaderboard.id), attempts[landed.indexOf(true)])
        }))

      it.effect("keeps a deleted leaderboard out of every read and write", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored(1)
          assert.isTrue(yield* repository.softDelete(leaderboard.id, t1))
          assert.isFalse(yield* repository.softDelete(leaderboard.id, t1))
          assert.isTrue(Option.isNone(yield* repository.find(leaderboard.id)))
          assert.isTrue(Option.isNone(yield* repository.findServing(leaderboard.id)))
          assert.deepStrictEqual(yield* repository.list(leaderboard.workspace_id, { offset: 0, limit: 10 }), [])
          assert.isFalse(yield* repository.update(changed(leaderboard, { name: "too late" })))
        }))

      it.effect("serves a leaderboard with its candidates in id order, their credentials and the ranking winner", () =>
        Effect.gen(function*() {
          const { candidates, leaderboard, repository } = yield* stored(2)
          const withToken = new Candidate({ ...aCandidate(leaderboard), has_token: true })
          yield* repository.insertCandidates([{ candidate: withToken, sealedToken: "sealed" }])
          const all = [...candidates, withToken].sort((a, b) => a.id < b.id ? -1 : 1)
          assert.deepStrictEqual(yield* repository.candidates(leaderboard.id), all)
          yield* repository.setRankingWinner(leaderboard.id, candidates[0]!.id)
          const serving = Option.getOrThrow(yield* repository.findServing(leaderboard.id))
          assert.deepStrictEqual(serving.leaderboard, leaderboard)
          assert.deepStrictEqual(serving.candidates, all)
          assert.deepStrictEqual([...serving.credentials], [[withToken.id, "sealed"]])
          assert.strictEqual(serving.ranking_winner, candidates[0]!.id)
          yield* repository.setRankingWinner(leaderboard.id, null)
          assert.isNull(Option.getOrThrow(yield* repository.findServing(leaderboard.id)).ranking_winner)
        }))

      it.effect("the serving snapshot shows a change made through this repository at once", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored()
          const before = Option.getOrThrow(yield* repository.servingSnapshot(leaderboard.id))
          assert.deepStrictEqual(before.leaderboard, leaderboard)
          const renamed = changed(leaderboard, { name: "renamed" })
          assert.isTrue(yield* repository.update(renamed))
          assert.deepStrictEqual(Option.getOrThrow(yield* repository.servingSnapshot(leaderboard.id)).leaderboard, renamed)
          const candidate = aCandidate(leaderboard)
          yield* repository.insertCandidates([{ candidate, sealedToken: null }])
          assert.deepStrictEqual(Option.getOrThrow(yield* repository.servingSnapshot(leaderboard.id)).candidates, [candidate])
        }))

      it.effect("stores candidates all or none: one refused leaves none of them stored", () =>
        Effect.gen(function*() {
          const { candidates: [existing], leaderboard, repository } = yield* stored(1)
          const fresh = [aCandidate(leaderboard), aCandidate(leaderboard)]
          // the second row reuses a stored id: the primary key refuses it, after the first was written
          const exit = yield* Effect.exit(repository.insertCandidates([
            { candidate: fresh[0]!, sealedToken: null },
            { candidate: new Candidate({ ...fresh[1]!, id: existing!.id }), sealedToken: null }
          ]))
          assert.isTrue(Exit.hasDies(exit))
          assert.deepStrictEqual(yield* repository.candidates(leaderboard.id), [existing!])
          yield* repository.insertCandidates(fresh.map((candidate) => ({ candidate, sealedToken: null })))
          assert.deepStrictEqual(
            yield* repository.candidates(leaderboard.id),
            [existing!, ...fresh].sort((a, b) => a.id < b.id ? -1 : 1)
          )
        }))

      it.effect("removes a candidate of its own leaderboard once, and moves the leaderboard to the next version", () =>
        Effect.gen(function*() {
          const { candidates: [kept, removed], leaderboard, repository } = yield* stored(2)
          const other = yield* stored(1)
          assert.isFalse(yield* repository.removeCandidate(leaderboard.id, other.candidates[0]!.id))
          assert.isTrue(yield* repository.removeCandidate(leaderboard.id, removed!.id))
          assert.isFalse(yield* repository.removeCandidate(leaderboard.id, removed!.id))
          assert.deepStrictEqual(yield* repository.candidates(leaderboard.id), [kept!])
          assert.strictEqual((yield* found(leaderboard.id))?.version, leaderboard.version + 1)
          // an update computed before the removal saw other candidates: it loses
          assert.isFalse(yield* repository.update(changed(leaderboard, { name: "stale" })))
        }))

      it.effect("removing the chosen candidate clears the choice and falls back to the ranking winner", () =>
        Effect.gen(function*() {
          const { candidates: [chosen, other], leaderboard, repository } = yield* stored(2)
          const manual = changed(leaderboard, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: chosen!.id })
          assert.isTrue(yield* repository.update(manual))
          assert.isTrue(yield* repository.removeCandidate(leaderboard.id, other!.id))
          assert.strictEqual((yield* found(leaderboard.id))?.chosen_leaderboard_model_id, chosen!.id)
          assert.isTrue(yield* repository.removeCandidate(leaderboard.id, chosen!.id))
          assert.deepStrictEqual(
            yield* found(leaderboard.id),
            new Leaderboard({
              ...manual,
              chosen_model_strategy: "ranking_winner",
              chosen_leaderboard_model_id: null,
              version: manual.version + 2
            })
          )
        }))

      it.effect("lists due schedules and lets one caller claim each occurrence", () =>
        Effect.gen(function*() {
          const repository = yield* LeaderboardRepository
          const workspace = yield* (yield* ContractWorkspaces).make
          const at = (iso: string) => ({ cron: "0 * * * *", timezone: "UTC", next_run_at: iso })
          const due = new Leaderboard({ ...aLeaderboard(workspace), schedule: at("2026-11-22T10:00:00.000Z") })
          const later = new Leaderboard({ ...aLeaderboard(workspace), schedule: at("2026-11-22T12:00:00.000Z") })
          // a schedule stored before schedules were checked may hold anything: it is never due, and no failure
          const odd = new Leaderboard({ ...aLeaderboard(workspace), schedule: { cron: "hourly", next_run_at: "soon" } })
          for (const l of [due, later, odd]) yield* repository.insert(l)
          const dueIds = (yield* repository.dueSchedules(t1)).map((l) => l.id)
          assert.include(dueIds, due.id)
          assert.notInclude(dueIds, later.id)
          assert.notInclude(dueIds, odd.id)
          const claims = yield* Effect.all(
            Array.from({ length: 4 }, () => repository.advanceSchedule(due.id, "2026-11-22T10:00:00.000Z", "2026-11-22T11:00:00.000Z")),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(claims.filter(Boolean).length, 1)
          assert.deepStrictEqual(yield* found(due.id), new Leaderboard({
            ...due,
            schedule: at("2026-11-22T11:00:00.000Z"),
            version: due.version + 1
          }))
          assert.notInclude((yield* repository.dueSchedules(t0)).map((l) => l.id), due.id)
        }))

      it.effect("refuses, as a defect, a choice that is not a candidate of the leaderboard", () =>
        Effect.gen(function*() {
          const { leaderboard, repository } = yield* stored(1)
          const other = yield* stored(1)
          for (const chosen of [other.candidates[0]!.id, CandidateId.make(crypto.randomUUID())]) {
            const exit = yield* Effect.exit(repository.update(changed(leaderboard, { chosen_leaderboard_model_id: chosen })))
            assert.isTrue(Exit.hasDies(exit), `choosing ${chosen}`)
          }
          assert.deepStrictEqual(yield* found(leaderboard.id), leaderboard)
        }))
    })
  })
