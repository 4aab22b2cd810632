import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
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

interface Job {
  readonly id: string
  readonly status: string
}

/** What the contract asks of a store of a leaderboard's jobs (one running at a time per leaderboard). */
export interface LeaderboardJobs<J extends Job, R> {
  readonly store: Effect.Effect<{
    readonly start: (job: J) => Effect.Effect<J>
    readonly find: (id: string) => Effect.Effect<Option.Option<J>>
    readonly latest: (leaderboardId: string) => Effect.Effect<Option.Option<J>>
    readonly fail: (job: J, error: string, now: DateTime.Utc) => Effect.Effect<void>
  }, never, R>
  /** A running job of `leaderboard` with this id, made at `created_at`. */
  readonly aJob: (leaderboard: Leaderboard, id: string, created_at: DateTime.Utc) => J
  /** What a caller sees of a job (stored fields only). */
  readonly view: (job: J) => unknown
}

/**
 * The behaviour the use cases rely on from a repository of a leaderboard's jobs (auto-labels,
 * dataset improvements), declared once and run against every adapter (STYLE.md 19): `makeLayer`
 * builds a fresh one.
 */
export const leaderboardJobRepositoryContract = <J extends Job, R>(
  name: string,
  jobs: LeaderboardJobs<J, R>,
  makeLayer: () => Layer.Layer<R | LeaderboardRepository | WorkspaceRepository, unknown>
) =>
  describe(`${name} contract`, () => {
    const aJob = (leaderboard: Leaderboard, options: { readonly id?: string; readonly created_at?: DateTime.Utc } = {}) =>
      jobs.aJob(leaderboard, options.id ?? uuid(), options.created_at ?? t0)
    const viewOf = (job: Option.Option<J>) => Option.map(job, jobs.view)

    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a started job is found as given; latest is a leaderboard's newest, the greater id first at one instant", () =>
        Effect.gen(function*() {
          const store = yield* jobs.store
          const leaderboard = yield* aBoard
          assert.isTrue(Option.isNone(yield* store.latest(leaderboard.id)))
          assert.isTrue(Option.isNone(yield* store.find(uuid())))
          const first = aJob(leaderboard)
          assert.deepStrictEqual(jobs.view(yield* store.start(first)), jobs.view(first))
          assert.deepStrictEqual(viewOf(yield* store.find(first.id)), Option.some(jobs.view(first)))
          yield* store.fail(first, "stopped", at(1))

          const [low, high] = [uuid(), uuid()].sort()
          yield* store.start(aJob(leaderboard, { id: high!, created_at: at(2) }))
          yield* store.fail(aJob(leaderboard, { id: high! }), "stopped", at(3))
          yield* store.start(aJob(leaderboard, { id: low!, created_at: at(2) }))
          yield* store.start(aJob(yield* aBoard, { created_at: at(9) })) // another leaderboard's
          assert.strictEqual(Option.getOrThrow(yield* store.latest(leaderboard.id)).id, high)
        }))

      it.effect("while a job runs, start answers the running one; another leaderboard is free; once it ended a new one starts", () =>
        Effect.gen(function*() {
          const store = yield* jobs.store
          const leaderboard = yield* aBoard
          const running = aJob(leaderboard)
          yield* store.start(running)
          const refused = aJob(leaderboard, { created_at: at(1) })
          assert.deepStrictEqual(jobs.view(yield* store.start(refused)), jobs.view(running))
          assert.isTrue(Option.isNone(yield* store.find(refused.id)))

          const elsewhere = aJob(yield* aBoard)
          assert.strictEqual((yield* store.start(elsewhere)).id, elsewhere.id)

          yield* store.fail(running, "stopped", at(2))
          const next = aJob(leaderboard, { created_at: at(3) })
          assert.strictEqual((yield* store.start(next)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* store.latest(leaderboard.id)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* store.find(running.id)).status, "failed")
        }))
    })
  })
