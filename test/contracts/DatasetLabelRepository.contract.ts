import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import { DatasetLabelRepository, LabelJob, labelJobView } from "@podium/domain/datasets"
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
  new LabelJob({
    id: options.id ?? uuid(),
    leaderboard_id: leaderboard.id,
    base_version: 1,
    labeller: "labeller-model",
    status: "running",
    total: 3,
    labelled: 0,
    failed: 0,
    version: null,
    error: null,
    created_at: options.created_at ?? t0,
    finished_at: null
  })

const viewOf = (job: Option.Option<LabelJob>) => Option.map(job, labelJobView)

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `DatasetLabelRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const datasetLabelRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<DatasetLabelRepository | LeaderboardRepository | WorkspaceRepository, unknown>
) =>
  describe(`DatasetLabelRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a started job is found as given; latest is a leaderboard's newest, the greater id first at one instant", () =>
        Effect.gen(function*() {
          const labels = yield* DatasetLabelRepository
          const leaderboard = yield* aBoard
          assert.isTrue(Option.isNone(yield* labels.latest(leaderboard.id)))
          assert.isTrue(Option.isNone(yield* labels.find(uuid())))
          const first = aJob(leaderboard)
          assert.deepStrictEqual(labelJobView(yield* labels.start(first)), labelJobView(first))
          assert.deepStrictEqual(viewOf(yield* labels.find(first.id)), Option.some(labelJobView(first)))
          yield* labels.fail(first, "stopped", at(1))

          const [low, high] = [uuid(), uuid()].sort()
          yield* labels.start(aJob(leaderboard, { id: high!, created_at: at(2) }))
          yield* labels.fail(aJob(leaderboard, { id: high! }), "stopped", at(3))
          yield* labels.start(aJob(leaderboard, { id: low!, created_at: at(2) }))
          yield* labels.start(aJob(yield* aBoard, { created_at: at(9) })) // another leaderboard's
          assert.strictEqual(Option.getOrThrow(yield* labels.latest(leaderboard.id)).id, high)
        }))

      it.effect("while a job runs, start answers the running one; another leaderboard is free; once it ended a new one starts", () =>
        Effect.gen(function*() {
          const labels = yield* DatasetLabelRepository
          const leaderboard = yield* aBoard
          const running = aJob(leaderboard)
          yield* labels.start(running)
          const refused = aJob(leaderboard, { created_at: at(1) })
          assert.deepStrictEqual(labelJobView(yield* labels.start(refused)), labelJobView(running))
          assert.isTrue(Option.isNone(yield* labels.find(refused.id)))

          const elsewhere = aJob(yield* aBoard)
          assert.strictEqual((yield* labels.start(elsewhere)).id, elsewhere.id)

          yield* labels.fail(running, "stopped", at(2))
          const next = aJob(leaderboard, { created_at: at(3) })
          assert.strictEqual((yield* labels.start(next)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* labels.latest(leaderboard.id)).id, next.id)
          assert.strictEqual(Option.getOrThrow(yield* labels.find(running.id)).status, "failed")
        }))
    })
  })
