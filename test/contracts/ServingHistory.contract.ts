import { assert, describe, layer } from "@effect/vitest"
import {
  CandidateId,
  LeaderboardId,
  ServingEntryId,
  ServingHistory,
  ServingHistoryEntry,
  type ServingEntryKind
} from "@podium/domain/leaderboards"
import { RunId, TokenId, UserId, type WorkspaceId } from "@podium/domain/shared"
import { Context, DateTime, Effect, Exit, type Layer } from "effect"

/** A stored leaderboard for entries to belong to: the one thing the port needs that it does not own. */
export class ContractLeaderboards extends Context.Service<ContractLeaderboards, {
  readonly make: Effect.Effect<{ readonly workspace: WorkspaceId; readonly leaderboard: LeaderboardId }>
}>()("@podium/test/contracts/ContractLeaderboards") {}

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const candidate = () => CandidateId.make(crypto.randomUUID())

export const anEntry = (
  owner: { readonly workspace: WorkspaceId; readonly leaderboard: LeaderboardId },
  fields: { readonly minutes: number; readonly kind?: ServingEntryKind; readonly id?: ServingEntryId }
) =>
  new ServingHistoryEntry({
    id: fields.id ?? ServingEntryId.make(crypto.randomUUID()),
    workspace_id: owner.workspace,
    leaderboard_id: owner.leaderboard,
    at: DateTime.add(t0, { minutes: fields.minutes }),
    kind: fields.kind ?? "manual",
    from_candidate_id: candidate(),
    to_candidate_id: null,
    actor: { type: "user", id: UserId.make(crypto.randomUUID()) },
    evidence: { chosen_model_strategy: { from: "ranking_winner", to: "manual" } },
    reason: null
  })

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `ServingHistory` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const servingHistoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<ServingHistory | ContractLeaderboards, unknown>
) =>
  describe(`ServingHistory contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("lists what it appended as appended, each kind and actor, only the leaderboard's own", () =>
        Effect.gen(function*() {
          const history = yield* ServingHistory
          const leaderboards = yield* ContractLeaderboards
          const [mine, theirs] = [yield* leaderboards.make, yield* leaderboards.make]
          const entries = [
            anEntry(mine, { minutes: 1 }),
            new ServingHistoryEntry({
              ...anEntry(mine, { minutes: 2, kind: "run" }),
              from_candidate_id: null,
              to_candidate_id: candidate(),
              actor: { type: "system", id: "runs", run_id: RunId.make(crypto.randomUUID()) },
              evidence: null,
              reason: "significantly better (p = 0.01)"
            }),
            new ServingHistoryEntry({
              ...anEntry(mine, { minutes: 3, kind: "rollback" }),
              actor: { type: "api_token", id: TokenId.make(crypto.randomUUID()) }
            }),
            anEntry(mine, { minutes: 4, kind: "human" })
          ]
          for (const entry of entries) yield* history.append(entry)
          yield* history.append(anEntry(theirs, { minutes: 5 }))
          const page = yield* history.list(mine.leaderboard, { limit: 10 })
          assert.deepStrictEqual(page.entries, [...entries].reverse())
          assert.isNull(page.next_cursor)
        }))

      it.effect("pages newest first by time, then id, through next_cursor to the end", () =>
        Effect.gen(function*() {
          const history = yield* ServingHistory
          const owner = yield* (yield* ContractLeaderboards).make
          // two entries at one instant: the higher id is the newer
          const ids = [crypto.randomUUID(), crypto.randomUUID()].sort().map((id) => ServingEntryId.make(id))
          const entries = [
            anEntry(owner, { minutes: 0 }),
            anEntry(owner, { minutes: 5, id: ids[0]! }),
            anEntry(owner, { minutes: 5, id: ids[1]! }),
            anEntry(owner, { minutes: 9 }),
            anEntry(owner, { minutes: 2 })
          ]
          for (const entry of entries) yield* history.append(entry)
          const newestFirst = [entries[3]!, entries[2]!, entries[1]!, entries[4]!, entries[0]!].map((e) => e.id)
          const first = yield* history.list(owner.leaderboard, { limit: 2 })
          assert.deepStrictEqual(first.entries.map((e) => e.id), newestFirst.slice(0, 2))
          assert.strictEqual(first.next_cursor, newestFirst[1])
          const second = yield* history.list(owner.leaderboard, { limit: 2, cursor: first.next_cursor! })
          assert.deepStrictEqual(second.entries.map((e) => e.id), newestFirst.slice(2, 4))
          const last = yield* history.list(owner.leaderboard, { limit: 2, cursor: second.next_cursor! })
          assert.deepStrictEqual(last.entries.map((e) => e.id), newestFirst.slice(4))
          assert.isNull(last.next_cursor)
          // a page that ends exactly at the last entry says so
          assert.isNull((yield* history.list(owner.leaderboard, { limit: 5 })).next_cursor)
        }))

      it.effect("a cursor that names no entry of the leaderboard gives an empty page", () =>
        Effect.gen(function*() {
          const history = yield* ServingHistory
          const leaderboards = yield* ContractLeaderboards
          const [mine, theirs] = [yield* leaderboards.make, yield* leaderboards.make]
          yield* history.append(anEntry(mine, { minutes: 1 }))
          const foreign = anEntry(theirs, { minutes: 2 })
          yield* history.append(foreign)
          for (const cursor of [ServingEntryId.make(crypto.randomUUID()), foreign.id]) {
            assert.deepStrictEqual(yield* history.list(mine.leaderboard, { limit: 10, cursor }), { entries: [], next_cursor: null })
          }
        }))

      it.effect("appending an id twice dies and leaves the first entry", () =>
        Effect.gen(function*() {
          const history = yield* ServingHistory
          const owner = yield* (yield* ContractLeaderboards).make
          const entry = anEntry(owner, { minutes: 1 })
          yield* history.append(entry)
          const again = yield* Effect.exit(history.append(new ServingHistoryEntry({ ...entry, reason: "again" })))
          assert.isTrue(Exit.hasDies(again))
          assert.deepStrictEqual((yield* history.list(owner.leaderboard, { limit: 10 })).entries, [entry])
        }))
    })
  })
