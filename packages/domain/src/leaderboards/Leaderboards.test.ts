import { DateTime, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { IdGeneratorInOrder, ModelDirectoryEmpty, SecretCipherSealing, uuid, workspaceOwner } from "../testing/index.ts"
import { CandidateId } from "./Leaderboard.ts"
import { LeaderboardRepositoryMemory } from "./LeaderboardRepositoryMemory.ts"
import { ServingHistoryMemory } from "./ServingHistoryMemory.ts"
import { Leaderboards } from "./Leaderboards.ts"

// The use case over the memory repository; ids and sealing (ports of the shared context) are faked.



const layer = Leaderboards.layer.pipe(
  Layer.provide(Layer.mergeAll(LeaderboardRepositoryMemory.layer, ServingHistoryMemory.layer, IdGeneratorInOrder.layer, SecretCipherSealing.layer, ModelDirectoryEmpty.layer)),
  Layer.provideMerge(TestClock.layer())
)

const run = <A, E>(effect: Effect.Effect<A, E, Leaderboards | TestClock.TestClock>) =>
  Effect.runPromise(Effect.provide(effect, layer))

const owner = workspaceOwner(1)
const stranger = workspaceOwner(2)

const newLeaderboard = Effect.gen(function*() {
  const leaderboards = yield* Leaderboards
  return yield* leaderboards.create(owner, { name: "Support answers", dataset_type: "PUSH" })
})

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

describe("Leaderboards", () => {
  it("creates at version 1 at the clock's time, and updates at the time of the update", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      yield* TestClock.setTime(Date.parse("2026-11-22T10:00:00.000Z"))
      const created = yield* newLeaderboard
      expect(created).toMatchObject({ version: 1, workspace_id: uuid(1), status: "active", extra: {} })
      expect(DateTime.formatIso(created.created_at)).toBe("2026-11-22T10:00:00.000Z")
      yield* TestClock.adjust("1 hour")
      const renamed = yield* leaderboards.update(owner, created.id, { name: "renamed", extra: { color: "blue" } })
      expect(renamed).toMatchObject({ name: "renamed", version: 2, extra: { color: "blue" }, created_at: created.created_at })
      expect(DateTime.formatIso(renamed.updated_at)).toBe("2026-11-22T11:00:00.000Z")
      expect((yield* leaderboards.get(owner, created.id)).leaderboard).toEqual(renamed)
    })))

  it("another workspace's leaderboard does not exist for the caller", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      expect(yield* failureOf(leaderboards.get(stranger, id))).toMatchObject({ _tag: "NotFound", resource: "leaderboard" })
      expect(yield* failureOf(leaderboards.update(stranger, id, { name: "x", extra: {} }))).toMatchObject({ _tag: "NotFound" })
      expect(yield* failureOf(leaderboards.remove(stranger, id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* leaderboards.list(stranger, { limit: 10, offset: 0 })).toEqual([])
    })))

  it("concurrent updates of different fields all land", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      const notes = Array.from({ length: 10 }, (_, i) => ({ [`note_${i}`]: i }))
      yield* Effect.forEach(notes, (extra) => leaderboards.update(owner, id, { extra }), { concurrency: "unbounded" })
      const { leaderboard } = yield* leaderboards.get(owner, id)
      expect(leaderboard.extra).toEqual(Object.assign({}, ...notes))
      expect(leaderboard.version).toBe(1 + notes.length)
    })))

  it("removing the chosen candidate clears the choice; choosing it again is refused", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      const candidate = yield* leaderboards.addCandidate(owner, id, { name: "mini", model_name: "openai/gpt-4o-mini", token: "sk" })
      expect(candidate).toMatchObject({ leaderboard_id: id, platform: "Router", has_token: true })
      const choice = { chosen_model_strategy: "manual" as const, chosen_leaderboard_model_id: candidate.id, extra: {} }
      expect(yield* leaderboards.update(owner, id, choice)).toMatchObject({ chosen_leaderboard_model_id: candidate.id })
      yield* leaderboards.removeCandidate(owner, id, candidate.id)
      const { candidates, leaderboard } = yield* leaderboards.get(owner, id)
      expect(candidates).toEqual([])
      expect(leaderboard).toMatchObject({ chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null })
      expect(yield* failureOf(leaderboards.update(owner, id, choice)))
        .toMatchObject({ _tag: "InvalidInput", path: ["chosen_leaderboard_model_id"] })
      expect(yield* failureOf(leaderboards.removeCandidate(owner, id, candidate.id)))
        .toMatchObject({ _tag: "NotFound", resource: "candidate" })
    })))

  it("an archived leaderboard takes no candidates and no changes but its status", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      yield* leaderboards.update(owner, id, { status: "archived", extra: {} })
      expect(yield* failureOf(leaderboards.addCandidate(owner, id, { name: "mini", model_name: "m" })))
        .toMatchObject({ _tag: "LeaderboardArchived" })
      expect(yield* failureOf(leaderboards.update(owner, id, { description: "x", extra: {} })))
        .toMatchObject({ _tag: "LeaderboardArchived" })
      expect(yield* leaderboards.update(owner, id, { status: "active", extra: {} })).toMatchObject({ status: "active" })
    })))

  it("a deleted leaderboard is gone", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      yield* leaderboards.remove(owner, id)
      expect(yield* failureOf(leaderboards.get(owner, id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* failureOf(leaderboards.update(owner, id, { name: "x", extra: {} }))).toMatchObject({ _tag: "NotFound" })
      expect(yield* failureOf(leaderboards.remove(owner, id))).toMatchObject({ _tag: "NotFound" })
      expect(yield* failureOf(leaderboards.removeCandidate(owner, id, CandidateId.make(uuid(9)))))
        .toMatchObject({ _tag: "NotFound" })
    })))

  it("records a change of what serves and rolls it back; an archived leaderboard refuses the rollback", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      const [a, b] = yield* leaderboards.addCandidates(owner, id, [
        { name: "a", model_name: "openai/a" },
        { name: "b", model_name: "openai/b" }
      ])
      expect(yield* failureOf(leaderboards.rollback(owner, id))).toMatchObject({ _tag: "NoPreviousServing" })
      yield* leaderboards.update(owner, id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: a!.id, extra: {} })
      yield* leaderboards.update(owner, id, { chosen_leaderboard_model_id: b!.id, extra: {} })
      yield* leaderboards.update(owner, id, { name: "renamed", extra: {} })
      const done = yield* leaderboards.rollback(owner, id)
      expect(done).toMatchObject({ serving: a!.id, leaderboard: { chosen_leaderboard_model_id: a!.id } })
      const page = yield* leaderboards.servingHistory(owner, id, { limit: 10 })
      expect(page.entries.map((e) => [e.kind, e.from_candidate_id, e.to_candidate_id])).toEqual([
        ["rollback", b!.id, a!.id],
        ["manual", a!.id, b!.id],
        ["manual", null, a!.id]
      ])
      expect(page.entries[1]!.actor).toEqual({ type: "user", id: owner.user.id })
      expect(yield* failureOf(leaderboards.servingHistory(stranger, id, { limit: 10 }))).toMatchObject({ _tag: "NotFound" })
      yield* leaderboards.update(owner, id, { status: "archived", extra: {} })
      expect(yield* failureOf(leaderboards.rollback(owner, id))).toMatchObject({ _tag: "LeaderboardArchived" })
    })))
})
