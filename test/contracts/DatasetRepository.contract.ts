import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import {
  allowance,
  type ConsolidateInput,
  DatasetRepository,
  type DatasetState,
  type DatasetVersion,
  type EventLimits,
  parseRow,
  periodsOf,
  type RowToStore,
  versionView
} from "@podium/domain/datasets"
import { LeaderboardId, LeaderboardRepository } from "@podium/domain/leaderboards"
import { Bytes, DateTime, Effect, type Layer, Option, Result, Stream } from "effect"
import { createHash } from "node:crypto"
import { aLeaderboard } from "./LeaderboardRepository.contract.ts"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (hours: number) => DateTime.add(t0, { hours })

/** A leaderboard for rows to belong to, in a workspace of its own. */
const aDataset = Effect.gen(function*() {
  const leaderboard = aLeaderboard((yield* aUser()).workspaceId)
  yield* (yield* LeaderboardRepository).insert(leaderboard)
  return leaderboard.id
})

// Row ids are time-ordered in production (UUIDv7); a counter keeps them in order here.
let sequence = 0
const rowId = () => `00000000-0000-7000-8000-${(++sequence).toString(16).padStart(12, "0")}`

const toStore = (rows: ReadonlyArray<Record<string, unknown>>): Array<RowToStore> =>
  rows.map((row, index) => ({ ...Result.getOrThrow(parseRow(row, index)), index, id: rowId() }))

const push = (
  leaderboardId: LeaderboardId,
  rows: ReadonlyArray<Record<string, unknown>>,
  options: { readonly now?: DateTime.Utc; readonly limits?: EventLimits } = {}
) =>
  Effect.flatMap(DatasetRepository, (repository) => {
    const now = options.now ?? t0
    const { limits } = options
    return repository.append({
      leaderboardId,
      batchId: crypto.randomUUID(),
      rows: toStore(rows),
      now,
      periods: periodsOf(now),
      allowance: limits === undefined ? undefined : (used) => allowance(limits, used)
    })
  })

const consolidate = (leaderboardId: LeaderboardId, input: Partial<Omit<ConsolidateInput, "leaderboardId">> = {}) =>
  Effect.flatMap(DatasetRepository, (repository) =>
    repository.consolidate({ leaderboardId, now: at(1), trigger: "manual", dedupe: false, newest: null, ...input }))

const created = (version: Option.Option<DatasetVersion>) => {
  assert.isTrue(Option.isSome(version), "a version was expected")
  return Option.getOrThrow(version)
}

const iso = (t: DateTime.Utc | null) => t === null ? null : DateTime.formatIso(t)

const stateView = (s: DatasetState) => ({ ...s, pending_since: iso(s.pending_since), last_consolidated_at: iso(s.last_consolidated_at) })

const stateOf = (leaderboardId: LeaderboardId) =>
  Effect.flatMap(DatasetRepository, (repository) => Effect.map(repository.state(leaderboardId), stateView))

const downloaded = (leaderboardId: LeaderboardId, version: number) =>
  Effect.flatMap(DatasetRepository, (repository) =>
    Effect.map(Stream.runCollect(repository.download(leaderboardId, version)), Bytes.concat))

const linesOf = (leaderboardId: LeaderboardId, version: number) =>
  Effect.map(downloaded(leaderboardId, version), (bytes) => {
    const text = new TextDecoder().decode(bytes)
    assert.isTrue(text === "" || text.endsWith("\n"), "every line ends with a newline")
    return text === "" ? [] : text.slice(0, -1).split("\n").map((line) => JSON.parse(line) as unknown)
  })

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `DatasetRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const datasetRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<DatasetRepository | LeaderboardRepository | WorkspaceRepository, unknown>
) =>
  describe(`DatasetRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("stores rows as pending and counts them in the day and the month", () =>
        Effect.gen(function*() {
          const repository = yield* DatasetRepository
          const lb = yield* aDataset
          // no push yet: the same as a leaderboard it has never heard of
          assert.deepStrictEqual(yield* stateOf(lb), stateView(yield* repository.state(LeaderboardId.make(crypto.randomUUID()))))
          const first = yield* push(lb, [{ input: "a" }, { input: "b" }, { input: "c" }])
          assert.deepStrictEqual([first.stored, first.retried, first.overLimit], [[0, 1, 2], [], []])
          const expected = {
            pending: 3,
            pending_since: iso(t0),
            last_consolidated_at: null,
            latest_version: null,
            day: "2026-11-22",
            day_used: 3,
            month: "2026-11-01",
            month_used: 3
          }
          assert.deepStrictEqual(stateView(first.state), expected)
          assert.deepStrictEqual(yield* stateOf(lb), expected)
          const listed = (yield* repository.pending).find((p) => p.leaderboardId === lb)
          assert.deepStrictEqual(listed && stateView(listed.state), expected)

          // later the same day: the oldest pending row is still the first one
          const second = yield* push(lb, [{ input: "d" }], { now: at(1) })
          assert.deepStrictEqual(stateView(second.state), { ...expected, pending: 4, day_used: 4, month_used: 4 })
        }))

      it.effect("a new UTC day starts the daily count again, a new month the monthly one too", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          yield* push(lb, [{ input: "a" }, { input: "b" }], { now: DateTime.makeUnsafe("2026-11-29T23:59:59.999Z") })
          const nextDay = yield* push(lb, [{ input: "c" }], { now: DateTime.makeUnsafe("2026-11-30T00:00:00.000Z") })
          assert.deepStrictEqual(
            [nextDay.state.day, nextDay.state.day_used, nextDay.state.month, nextDay.state.month_used],
            ["2026-11-30", 1, "2026-11-01", 3]
          )
          const nextMonth = yield* push(lb, [{ input: "d" }], { now: DateTime.makeUnsafe("2026-12-01T00:00:00.000Z") })
          assert.deepStrictEqual(
            [nextMonth.state.day, nextMonth.state.day_used, nextMonth.state.month, nextMonth.state.month_used],
            ["2026-12-01", 1, "2026-12-01", 1]
          )
          assert.strictEqual(nextMonth.state.pending, 4)
        }))

      it.effect("a push stamped before midnight that commits after one of the new day counts in the new day", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const limits = { daily: 3, monthly: 4 }
          const early = DateTime.makeUnsafe("2026-11-30T23:59:59.990Z")
          const late = DateTime.makeUnsafe("2026-12-01T00:00:00.010Z")
          yield* push(lb, [{ input: "a" }, { input: "b" }], { now: early })
          yield* push(lb, [{ input: "c" }, { input: "d" }], { now: late, limits })
          // the late-stamped push moved the periods on; the early one sees (and adds to) the new day's count
          const straggler = yield* push(lb, [{ input: "e" }, { input: "f" }], { now: early, limits })
          assert.deepStrictEqual([straggler.stored, straggler.overLimit], [[0], [1]])
          assert.deepStrictEqual(
            [straggler.state.day, straggler.state.day_used, straggler.state.month, straggler.state.month_used],
            ["2026-12-01", 3, "2026-12-01", 3]
          )
        }))

      for (const limits of [undefined, { daily: 1000, monthly: null }]) {
        it.effect(`a client id stored before, or earlier in the push, is a retry: stored once, counted once (${limits === undefined ? "no limits" : "limited"})`, () =>
          Effect.gen(function*() {
            const lb = yield* aDataset
            yield* push(lb, [{ input: "a", id: "evt-a" }, { input: "b", id: "evt-b" }], { limits })
            const again = yield* push(lb, [
              { input: "a again", id: "evt-a" },
              { input: "c", id: "evt-c" },
              { input: "c again", id: "evt-c" },
              { input: "no id" }
            ], { limits })
            assert.deepStrictEqual([again.stored, again.retried, again.overLimit], [[1, 3], [0, 2], []])
            assert.deepStrictEqual([again.state.pending, again.state.day_used], [4, 4])
            created(yield* consolidate(lb))
            assert.deepStrictEqual(yield* linesOf(lb, 1), [
              { input: "a", id: "evt-a" },
              { input: "b", id: "evt-b" },
              { input: "c", id: "evt-c" },
              { input: "no id" }
            ])
            // a retry after consolidation is still a retry
            const late = yield* push(lb, [{ input: "b", id: "evt-b" }], { limits })
            assert.deepStrictEqual([late.stored, late.retried, late.state.pending], [[], [0], 0])
          }))
      }

      it.effect("the limits take the first rows that fit, from the counts of the current periods", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const limits = { daily: 3, monthly: 5 }
          const first = yield* push(lb, [{ input: "1", id: "one" }, { input: "2" }, { input: "3" }, { input: "4" }], { limits })
          assert.deepStrictEqual([first.stored, first.overLimit], [[0, 1, 2], [3]])
          assert.deepStrictEqual([first.state.pending, first.state.day_used, first.state.month_used], [3, 3, 3])
          // the day is full: a retry is still answered as one, everything else is over the limit
          const full = yield* push(lb, [{ input: "5" }, { input: "1", id: "one" }, { input: "6" }], { limits })
          assert.deepStrictEqual([full.stored, full.retried, full.overLimit], [[], [1], [0, 2]])
          assert.deepStrictEqual([full.state.pending, full.state.day_used], [3, 3])
          // the next day has room for 3 more, but the month only for 2
          const nextDay = yield* push(lb, [{ input: "7" }, { input: "8" }, { input: "9" }], { now: at(24), limits })
          assert.deepStrictEqual([nextDay.stored, nextDay.overLimit], [[0, 1], [2]])
          assert.deepStrictEqual([nextDay.state.day_used, nextDay.state.month_used, nextDay.state.pending], [2, 5, 5])
        }))

      it.effect("concurrent pushes under a limit store exactly the limit", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const limits = { daily: 120, monthly: null }
          const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: 50 }, (_, i) => ({ input: `${b}-${i}` })))
          const results = yield* Effect.forEach(batches, (rows) => push(lb, rows, { limits }), { concurrency: "unbounded" })
          for (const r of results) assert.strictEqual(r.stored.length + r.overLimit.length, 50)
          assert.strictEqual(results.reduce((n, r) => n + r.stored.length, 0), 120)
          const state = yield* stateOf(lb)
          assert.deepStrictEqual([state.pending, state.day_used, state.month_used], [120, 120, 120])
          assert.strictEqual(created(yield* consolidate(lb)).row_count, 120)
        }))

      for (const limits of [undefined, { daily: 100, monthly: null }]) {
        it.effect(`concurrent retries of one client id store it once (${limits === undefined ? "no limits" : "limited"})`, () =>
          Effect.gen(function*() {
            const lb = yield* aDataset
            const results = yield* Effect.forEach(
              Array.from({ length: 6 }, () => [{ input: "same", id: "evt-same" }]),
              (rows) => push(lb, rows, { limits }),
              { concurrency: "unbounded" }
            )
            assert.strictEqual(results.filter((r) => r.stored.length === 1).length, 1)
            assert.strictEqual(results.filter((r) => r.retried.length === 1).length, 5)
            const state = yield* stateOf(lb)
            assert.deepStrictEqual([state.pending, state.day_used], [1, 1])
          }))
      }

      it.effect("nothing pending consolidates into nothing", () =>
        Effect.gen(function*() {
          const repository = yield* DatasetRepository
          const lb = yield* aDataset
          assert.isTrue(Option.isNone(yield* consolidate(lb)))
          yield* push(lb, [{ input: "a" }])
          created(yield* consolidate(lb))
          const after = yield* stateOf(lb)
          assert.isTrue(Option.isNone(yield* consolidate(lb, { now: at(5) })))
          assert.deepStrictEqual(yield* stateOf(lb), after)
          assert.deepStrictEqual((yield* repository.versions(lb)).map((v) => v.version), [1])
        }))

      it.effect("versions are numbered from 1; each takes the rows pending and keeps the earlier ones", () =>
        Effect.gen(function*() {
          const repository = yield* DatasetRepository
          const lb = yield* aDataset
          yield* push(lb, [{ input: "a", expected: "A" }, { messages: [{ role: "user", content: "b" }], note: { kept: true } }])
          const v1 = created(yield* consolidate(lb, { now: at(1) }))
          assert.deepStrictEqual(versionView(v1), {
            version: 1,
            row_count: 2,
            added_rows: 2,
            dropped_duplicates: 0,
            labelled_rows: 0,
            trigger: "manual",
            sha256: null,
            created_at: DateTime.formatIso(at(1))
          })
          assert.deepStrictEqual(yield* stateOf(lb), {
            pending: 0,
            pending_since: null,
            last_consolidated_at: iso(at(1)),
            latest_version: 1,
            day: "2026-11-22",
            day_used: 2,
            month: "2026-11-01",
            month_used: 2
          })
          assert.isUndefined((yield* repository.pending).find((p) => p.leaderboardId === lb))

          yield* push(lb, [{ input: "c" }], { now: at(2) })
          const v2 = created(yield* consolidate(lb, { now: at(3), trigger: "events" }))
          assert.deepStrictEqual(
            [v2.version, v2.row_count, v2.added_rows, v2.trigger, iso(v2.created_at)],
            [2, 3, 1, "events", iso(at(3))]
          )
          assert.deepStrictEqual((yield* repository.versions(lb)).map(versionView), [versionView(v2), versionView(v1)])
          assert.deepStrictEqual(yield* linesOf(lb, 1), [
            { input: "a", expected: "A" },
            { messages: [{ role: "user", content: "b" }], note: { kept: true } }
          ])
          assert.deepStrictEqual(yield* linesOf(lb, 2), [...(yield* linesOf(lb, 1)), { input: "c" }])
        }))

      it.effect("dedupe drops a row equal in input and reference to one of the previous version or earlier in the batch", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const hi = [{ role: "user", content: "hi" }]
          yield* push(lb, [{ input: "q1", expected: "a1" }, { input: "q2" }])
          created(yield* consolidate(lb, { dedupe: true }))
          yield* push(lb, [
            { input: "q1", answer: "a1", extra: "differs" }, // as in v1: dropped
            { input: "q1", expected: "other" }, // another reference: kept
            { input: "q2" }, // no reference, as in v1: dropped
            { prompt: "q3" }, // kept
            { question: "q3", note: 1 }, // as the row before: dropped
            { messages: hi }, // kept
            { messages: hi, id: "m2" }, // dropped
            { messages: hi, expected: "hello" } // kept
          ])
          const v2 = created(yield* consolidate(lb, { dedupe: true, now: at(2) }))
          assert.deepStrictEqual([v2.row_count, v2.added_rows, v2.dropped_duplicates], [6, 4, 4])
          assert.deepStrictEqual(yield* linesOf(lb, 2), [
            { input: "q1", expected: "a1" },
            { input: "q2" },
            { input: "q1", expected: "other" },
            { prompt: "q3" },
            { messages: hi },
            { messages: hi, expected: "hello" }
          ])
          // the same rows without dedupe are all kept
          yield* push(lb, [{ input: "q2" }, { input: "q2" }])
          const v3 = created(yield* consolidate(lb, { now: at(3) }))
          assert.deepStrictEqual([v3.row_count, v3.added_rows, v3.dropped_duplicates], [8, 2, 0])
        }))

      it.effect("newest N keeps the newest rows; an older version keeps its own rows", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          yield* push(lb, [{ input: "r1" }, { input: "r2" }])
          assert.strictEqual(created(yield* consolidate(lb, { newest: 3 })).row_count, 2)
          yield* push(lb, [{ input: "r3" }, { input: "r4" }])
          const v2 = created(yield* consolidate(lb, { newest: 3 }))
          assert.deepStrictEqual([v2.row_count, v2.added_rows], [3, 2])
          yield* push(lb, [{ input: "r5" }])
          assert.strictEqual(created(yield* consolidate(lb, { newest: 3 })).row_count, 3)
          const inputs = (version: number) =>
            Effect.map(linesOf(lb, version), (lines) => lines.map((l) => (l as { input: string }).input))
          assert.deepStrictEqual(yield* inputs(1), ["r1", "r2"])
          assert.deepStrictEqual(yield* inputs(2), ["r2", "r3", "r4"])
          assert.deepStrictEqual(yield* inputs(3), ["r3", "r4", "r5"])
        }))

      it.effect("dedupe compares with the rows the previous version holds: one past the newest N may come back", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const rules = { dedupe: true, newest: 1 }
          for (const input of ["q1", "q2", "q1"]) {
            yield* push(lb, [{ input }])
            assert.strictEqual(created(yield* consolidate(lb, rules)).dropped_duplicates, 0)
          }
          yield* push(lb, [{ input: "q1" }])
          assert.strictEqual(created(yield* consolidate(lb, rules)).dropped_duplicates, 1)
          assert.deepStrictEqual(yield* linesOf(lb, 4), [{ input: "q1" }])
        }))

      it.effect("a download is the rows' JSON exactly as pushed, one a line, in arrival order", () =>
        Effect.gen(function*() {
          const lb = yield* aDataset
          const rows = [
            { input: "quotes \" and \\ backslashes", expected: "\\u0000 is only text here" },
            { input: "line\nbreak\ttab", extra: { "é": "naïve 😀", nested: [1, 2.5, true, null] } },
            { prompt: "non-BMP 𝄞 and U+2028 \u2028 and \u0001" }
          ]
          yield* push(lb, rows.slice(0, 2))
          yield* push(lb, rows.slice(2), { now: at(1) })
          created(yield* consolidate(lb, { now: at(2) }))
          const text = new TextDecoder().decode(yield* downloaded(lb, 1))
          assert.strictEqual(text, rows.map((r) => `${JSON.stringify(r)}\n`).join(""))
          assert.deepStrictEqual(yield* downloaded(lb, 2), new Uint8Array())
        }))

      it.effect("a version's hash is the SHA-256 of its download, recorded once computed", () =>
        Effect.gen(function*() {
          const repository = yield* DatasetRepository
          const lb = yield* aDataset
          yield* push(lb, [{ input: "a", expected: "é" }, { input: "b" }])
          created(yield* consolidate(lb))
          assert.isTrue((yield* repository.unhashed).some((u) => u.leaderboardId === lb && u.version === 1))
          const sha256 = yield* repository.hash(lb, 1)
          assert.strictEqual(sha256, createHash("sha256").update(yield* downloaded(lb, 1)).digest("hex"))
          assert.strictEqual((yield* repository.versions(lb))[0]?.sha256, sha256)
          assert.isFalse((yield* repository.unhashed).some((u) => u.leaderboardId === lb))
          // hashing again is harmless
          assert.strictEqual(yield* repository.hash(lb, 1), sha256)
        }))
    })
  })
