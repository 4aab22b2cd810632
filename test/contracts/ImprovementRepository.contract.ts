import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import { Improvement, ImprovementRepository, improvementView } from "@podium/domain/runs"
import { Leaderboard, LeaderboardRepository } from "@podium/domain/leaderboards"
import { DateTime, Effect, type Layer, Option } from "effect"
import { aLeaderboard } from "./LeaderboardRepository.contract.ts"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })
const uuid = () => crypto.randomUUID() as string

const aBoard = Effect.gen(function*() {
  const leaderboard = new Leaderboard(aLeaderboard((yield* aUser()).workspaceId))
  yield* (yield* LeaderboardRepository).insert(leaderboard)
  return leaderboard
})

const aJob = (leaderboard: Leaderboard, options: { readonly id?: string; readonly created_at?: DateTime.Utc } = {}) =>
  new Improvement({
    id: options.id ?? uuid(),
    leaderboard_id: leaderboard.id,
    status: "running",
    labeller: "router:labeller/model",
    replace_references: false,
    total: 0,
    improved: 0,
    failed: 0,
    version: null,
    error: null,
    created_at: options.created_at ?? t0,
    finished_at: null
  })

const viewOf = (job: Option.Option<Improvement>) => Option.map(job, improvementView)

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `ImprovementRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const improvementRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<ImprovementRepository | LeaderboardRepository | WorkspaceRepository, unknown>
) =>
  describe(`ImprovementRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a started job is found as given; latest is a leaderboard's newest, the greater id first at one instant", () =>
        Effect.gen(function*() {
          const jobs = yield* ImprovementRepository
          const leaderboard = yield* aBoard
          assert.isTrue(Option.isNone(yield* jobs.latest(leaderboard.id)))
          assert.isTrue(Option.isNone(yield* jobs.find(uuid())))
          const first = aJob(leaderboard)
          assert.deepStrictEqual(improvementView(yield* jobs.start(first)), improvementView(first))
          assert.deepStrictEqual(viewOf(yield* jobs.find(first.id)), Option.some(improvementView(first)))
          yield* jobs.fail(first.id, "stopped", at(1))

          const [low, high] = [uuid(), uuid()].sort()
          yield* jobs.start(aJob(leaderboard, { id: high!, created_at: at(2) }))
          yield* jobs.fail(high!, "stopped", at(3))
          yield* jobs.start(aJob(leaderboard, { id: low!, created_at: at(2) }))
          yield* jobs.start(aJob(yield* aBoard, { created_at: at(9) })) // another leaderboard's
          assert.strictEqual(Option.getOrThrow(yield* jobs.latest(leaderboard.id)).id, high)
        }))

      it.effect("while a job runs, start answers the running one; another leaderboard is free; once it ended a new one starts", () =>
        Effect.gen(function*() {
          const jobs = yield* ImprovementRepository
          const leaderboard = yield* aBoard
          const running = aJob(leaderboard)
          yield* jobs.start(running)
          const refused = aJob(leaderboard, { created_at: at(1) })
          assert.deepStrictEqual(improvementView(yield* jobs.start(refused)), improvementView(running))
          assert.isTrue(Option.isNone(yield* jobs.find(refused.id)))

          const elsewhere = aJob(yield* aBoard)
          assert.strictEqual((yield* jobs.start(elsewhere)).id, elsewhere.id)

          yield* jobs.fail(running.id, "stopped", at(2))
          const next = aJob(leaderboard, { created_at: at(3) })
          assert.strictEqual((yield* jobs.start(next)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* jobs.latest(leaderboard.id)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* jobs.find(running.id)).status, "failed")
        }))
    })
  })
