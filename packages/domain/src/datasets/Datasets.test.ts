import { Bytes, DateTime, Effect, Layer, Option, References, Stream } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { Principal, PushTokenRepository, TokenSecrets } from "../access/index.ts"
import { type ChallengeInput, LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "../leaderboards/memory.ts"
import { Links, WorkspaceId } from "../shared/index.ts"
import { IdGeneratorInOrder, ModelDirectoryEmpty, SecretCipherSealing, uuid, workspaceOwner } from "../testing/index.ts"
import { DatasetRepository } from "./DatasetRepository.ts"
import { DatasetRepositoryMemory } from "./DatasetRepositoryMemory.ts"
import { maxPushBytes, maxRowsPerPush } from "./DatasetRow.ts"
import { Datasets } from "./Datasets.ts"

// The use cases over the memory repositories with a test clock. Push tokens are minted and looked
// up elsewhere (the HTTP adapter and its tests); here a push token is only the principal it makes.

const notUsed = () => Effect.die("not used in these tests")
const pushTokens = Layer.succeed(PushTokenRepository, {
  findBySecretHash: notUsed,
  touch: notUsed,
  insert: notUsed,
  list: notUsed,
  revokeAll: notUsed,
  revoke: notUsed
})
const secrets = Layer.succeed(TokenSecrets, { mint: notUsed, digest: () => "digest" })
const links = Layer.succeed(Links, {
  inviteAcceptUrl: () => "",
  tracesUrl: () => "",
  datasetPushUrl: (id) => `https://podium.test/v1/leaderboard/${id}/dataset/push`,
  modelVersionInferenceUrl: () => ""
})

const layer = Datasets.layer.pipe(
  Layer.provideMerge(Leaderboards.layer),
  Layer.provideMerge(Layer.mergeAll(
    LeaderboardRepositoryMemory.layer,
    ServingHistoryMemory.layer,
    DatasetRepositoryMemory.layer,
    IdGeneratorInOrder.layer,
    SecretCipherSealing.layer,
    ModelDirectoryEmpty.layer,
    pushTokens,
    secrets,
    links
  )),
  Layer.provideMerge(TestClock.layer())
)

const t0 = Date.parse("2026-11-22T10:00:00.000Z")

// consolidations log at info level; the tests read the versions instead
const run = <A, E>(effect: Effect.Effect<A, E, Datasets | Leaderboards | DatasetRepository | TestClock.TestClock>) =>
  Effect.runPromise(Effect.andThen(TestClock.setTime(t0), effect).pipe(
    Effect.provide(layer),
    Effect.provideService(References.MinimumLogLevel, "Warn")
  ))

const owner = workspaceOwner(1)
const stranger = workspaceOwner(2)

const aLeaderboard = (challenge: ChallengeInput = {}) =>
  Effect.flatMap(Leaderboards, (l) =>
    Effect.map(l.create(owner, { name: "Support answers", dataset_type: "PUSH", ...challenge }), (created) => created.id))

const push = (id: LeaderboardId, body: unknown, as: Principal = owner, bytes = 100) =>
  Effect.flatMap(Datasets, (d) => d.push(as, id, body, bytes))

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ input: `question ${from + i}` }))

/**
 * Runs other fibers (a consolidation started by a push) until `read` satisfies `done`. Each turn
 * waits for the event loop, not only for other fibers: the hash comes from Web Crypto's thread
 * pool, which a busy machine (mutation testing, two runners) may not finish within 1000 fiber yields.
 */
const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))
const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      const a = yield* read
      if (done(a)) return a
      yield* nextTurn
    }
    return yield* Effect.die("never settled")
  })

const versionsOf = (id: LeaderboardId) => Effect.flatMap(DatasetRepository, (r) => r.versions(id))

describe("Datasets.push", () => {
  it("stores the valid rows, lists the rejected ones by index, and answers what the dataset looks like now", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard({ consolidate_every_events: 100, consolidate_every_hours: 6 })
      const answer = yield* push(id, [{ input: "2+2?", expected: "4" }, "junk", { expected: "no input" }, { prompt: "hi", id: "c-1" }])
      expect(answer).toEqual({
        accepted_rows: 2,
        rejected_rows: 2,
        duplicate_rows: 0,
        status: "partial",
        batch_id: expect.any(String),
        pending_events: 2,
        limits: {
          daily: { used: 2, limit: null, resets_at: "2026-11-23T00:00:00.000Z" },
          monthly: { used: 2, limit: null, resets_at: "2026-12-01T00:00:00.000Z" }
        },
        consolidation: {
          pending_events: 2,
          every_events: 100,
          every_hours: 6,
          events_until_next: 98,
          next_at: "2026-11-22T16:00:00.000Z",
          last_consolidated_at: null,
          triggered: null
        },
        rejections: [
          { index: 1, code: "invalid_row", message: "A row must be a JSON object" },
          { index: 2, code: "missing_input", message: "A row needs an input: messages, input, prompt, question or query" }
        ]
      })
      const retried = yield* push(id, { rows: [{ prompt: "hi", id: "c-1" }], events: [{ input: "new" }] })
      expect(retried).toMatchObject({ accepted_rows: 2, duplicate_rows: 1, rejected_rows: 0, status: "accepted", pending_events: 3 })
    })))

  it("lists at most 100 rejections and counts them all", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard()
      const answer = yield* push(id, Array.from({ length: 150 }, () => ({ expected: "no input" })))
      expect(answer).toMatchObject({ accepted_rows: 0, rejected_rows: 150, status: "partial" })
      expect(answer.rejections.map((r) => r.index)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    })))

  it("only a PUSH leaderboard that is active and before its end date collects rows", () =>
    run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const get = yield* aLeaderboard({ dataset_type: "GET" })
      expect(yield* refusal(push(get, rows(1)))).toMatchObject({ _tag: "NotPushDataset", leaderboard_id: get })

      const id = yield* aLeaderboard()
      yield* leaderboards.update(owner, id, { status: "paused", extra: {} })
      expect(yield* refusal(push(id, rows(1)))).toMatchObject({ _tag: "LeaderboardPaused", leaderboard_id: id })
      yield* leaderboards.update(owner, id, { status: "archived", extra: {} })
      expect(yield* refusal(push(id, rows(1)))).toMatchObject({ _tag: "LeaderboardArchived", leaderboard_id: id })
      yield* leaderboards.update(owner, id, { status: "active", extra: {} })
      expect(yield* push(id, rows(1))).toMatchObject({ accepted_rows: 1 })

      const ending = yield* aLeaderboard({ end_date: "2026-11-23T00:00:00.000Z" })
      yield* TestClock.setTime(Date.parse("2026-11-22T23:59:59.999Z"))
      expect(yield* push(ending, rows(1))).toMatchObject({ accepted_rows: 1 })
      yield* TestClock.adjust("1 millis")
      expect(yield* refusal(push(ending, rows(1))))
        .toMatchObject({ _tag: "CollectionEnded", leaderboard_id: ending, end_date: "2026-11-23T00:00:00.000Z" })
    })))

  it("refuses more rows or bytes than a push may carry, and a body that holds no rows", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard()
      expect(yield* refusal(push(id, rows(maxRowsPerPush + 1)))).toMatchObject({ _tag: "PushTooLarge" })
      expect(yield* refusal(push(id, rows(1), owner, maxPushBytes + 1))).toMatchObject({ _tag: "PushTooLarge" })
      expect(yield* refusal(push(id, "rows"))).toMatchObject({ _tag: "InvalidInput", path: ["payload"] })
      expect(yield* push(id, rows(1), owner, maxPushBytes)).toMatchObject({ accepted_rows: 1 })
      expect(yield* push(id, rows(maxRowsPerPush))).toMatchObject({ accepted_rows: maxRowsPerPush })
    })))

  it("over the daily limit the rows that fit are stored and the others rejected; with none fitting, 429 until midnight", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard({ daily_event_limit: 3 })
      yield* push(id, [{ input: "a", id: "first" }, { input: "b" }])
      const partial = yield* push(id, [{ input: "c" }, "junk", { input: "d" }, { input: "e" }])
      expect(partial).toMatchObject({ accepted_rows: 1, rejected_rows: 3, status: "partial", pending_events: 3 })
      expect(partial.rejections.map((r) => [r.index, r.code])).toEqual([
        [1, "invalid_row"],
        [2, "event_limit_exceeded"],
        [3, "event_limit_exceeded"]
      ])
      expect(partial.limits.daily).toMatchObject({ used: 3, limit: 3 })

      // a retry of a stored row is still answered while the day is full
      expect(yield* push(id, [{ input: "a", id: "first" }])).toMatchObject({ accepted_rows: 1, duplicate_rows: 1 })

      yield* TestClock.setTime(Date.parse("2026-11-22T23:00:00.000Z"))
      const full = yield* refusal(push(id, rows(2)))
      expect(full).toMatchObject({
        _tag: "EventLimitExceeded",
        leaderboard_id: id,
        retry_after_seconds: 3600,
        limits: { daily: { used: 3, limit: 3, resets_at: "2026-11-23T00:00:00.000Z" } }
      })

      yield* TestClock.adjust("1 hour")
      expect(yield* push(id, rows(2))).toMatchObject({ accepted_rows: 2, limits: { daily: { used: 2 } } })
    })))

  it("over the monthly limit, the wait is until the first of the next month", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard({ daily_event_limit: 100, monthly_event_limit: 2 })
      yield* push(id, rows(2))
      const full = yield* refusal(push(id, rows(1)))
      // from 2026-11-22T10:00Z to 2026-12-01T00:00Z
      expect(full).toMatchObject({ _tag: "EventLimitExceeded", retry_after_seconds: 8 * 86_400 + 14 * 3_600 })
      yield* TestClock.setTime(Date.parse("2026-12-01T00:00:00.000Z"))
      expect(yield* push(id, rows(1))).toMatchObject({ accepted_rows: 1, limits: { monthly: { used: 1, limit: 2 } } })
    })))

  it("a push token pushes to its own leaderboard only; another workspace finds nothing", () =>
    run(Effect.gen(function*() {
      const mine = yield* aLeaderboard()
      const other = yield* aLeaderboard()
      const token = Principal.PushTokenPrincipal({ pushTokenId: uuid(7), workspaceId: WorkspaceId.make(uuid(1)), leaderboardId: mine })
      expect(yield* push(mine, rows(1), token)).toMatchObject({ accepted_rows: 1 })
      expect(yield* refusal(push(other, rows(1), token))).toMatchObject({ _tag: "Unauthenticated" })
      const datasets = yield* Datasets
      expect(yield* refusal(datasets.status(token, other))).toMatchObject({ _tag: "Unauthenticated" })
      expect(yield* refusal(datasets.download(token, other, undefined))).toMatchObject({ _tag: "Unauthenticated" })
      expect(yield* refusal(push(mine, rows(1), stranger))).toMatchObject({ _tag: "NotFound", resource: "leaderboard" })
    })))
})

describe("Datasets consolidation", () => {
  it("the events trigger consolidates after the push that reaches it", () =>
    run(Effect.gen(function*() {
      const id = yield* aLeaderboard({ consolidate_every_events: 3 })
      expect(yield* push(id, rows(2))).toMatchObject({ consolidation: { events_until_next: 1, triggered: null } })
      expect(yield* push(id, rows(1, 2))).toMatchObject({ pending_events: 3, consolidation: { triggered: "events" } })
      const [version] = yield* eventually(versionsOf(id), (v) => v.length === 1 && v[0]!.sha256 !== null)
      expect(version).toMatchObject({ version: 1, row_count: 3, trigger: "events", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
    })))

  it("consolidateIfDue waits for the hours trigger, then makes a hashed version", () =>
    run(Effect.gen(function*() {
      const datasets = yield* Datasets
      const id = yield* aLeaderboard({ consolidate_every_hours: 2 })
      expect(yield* datasets.consolidateIfDue(id)).toEqual(Option.none())
      yield* push(id, rows(2))
      yield* TestClock.adjust("119 minutes")
      expect(yield* datasets.consolidateIfDue(id)).toEqual(Option.none())
      yield* TestClock.adjust("1 minute")
      const made = yield* datasets.consolidateIfDue(id)
      expect(Option.getOrThrow(made)).toMatchObject({ version: 1, row_count: 2, trigger: "hours", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
      expect(DateTime.formatIso(Option.getOrThrow(made).created_at)).toBe("2026-11-22T12:00:00.000Z")
      expect((yield* versionsOf(id))[0]?.sha256).toBe(Option.getOrThrow(made).sha256)
      // nothing pending: nothing to do, however late
      yield* TestClock.adjust("10 hours")
      expect(yield* datasets.consolidateIfDue(id)).toEqual(Option.none())
      // two hours after the last consolidation, not after the new row
      yield* push(id, rows(1, 2))
      expect(Option.getOrThrow(yield* datasets.consolidateIfDue(id))).toMatchObject({ version: 2, row_count: 3 })
    })))

  it("consolidateIfDue ignores what is not a PUSH dataset", () =>
    run(Effect.gen(function*() {
      const datasets = yield* Datasets
      const get = yield* aLeaderboard({ dataset_type: "GET", consolidate_every_hours: 1 })
      expect(yield* datasets.consolidateIfDue(get)).toEqual(Option.none())
      expect(yield* datasets.consolidateIfDue(LeaderboardId.make(uuid(999)))).toEqual(Option.none())
    })))

  it("a manual consolidation applies the leaderboard's dedupe and newest-N rules", () =>
    run(Effect.gen(function*() {
      const datasets = yield* Datasets
      const id = yield* aLeaderboard({ dedupe: true, auto_limit_size: true, max_samples_to_gather: 2 })
      yield* push(id, [{ input: "a" }, { input: "a" }, { input: "b" }, { input: "c" }])
      const answer = yield* datasets.consolidate(owner, id)
      expect(answer).toMatchObject({
        pending_events: 0,
        version: { version: 1, row_count: 2, added_rows: 3, dropped_duplicates: 1, trigger: "manual" }
      })
      expect(answer.version?.sha256).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* datasets.consolidate(owner, id)).toEqual({ version: null, pending_events: 0 })
      const { body } = yield* datasets.download(owner, id, undefined)
      const text = new TextDecoder().decode(Bytes.concat(yield* Stream.runCollect(body)))
      expect(text).toBe(`${JSON.stringify({ input: "b" })}\n${JSON.stringify({ input: "c" })}\n`)
    })))

  it("status shows pending rows, versions newest first, limits, triggers, rules and the push URL", () =>
    run(Effect.gen(function*() {
      const datasets = yield* Datasets
      const id = yield* aLeaderboard({ daily_event_limit: 50, consolidate_every_events: 10, dedupe: true })
      yield* push(id, rows(2))
      yield* datasets.consolidate(owner, id)
      yield* TestClock.adjust("1 hour")
      yield* push(id, rows(1, 2))
      yield* datasets.consolidate(owner, id)
      yield* push(id, rows(1, 3))
      const status = yield* datasets.status(owner, id)
      expect(status).toMatchObject({
        leaderboard_id: id,
        dataset_type: "PUSH",
        pending_events: 1,
        latest_version: { version: 2, row_count: 3, created_at: "2026-11-22T11:00:00.000Z" },
        limits: { daily: { used: 4, limit: 50 }, monthly: { used: 4, limit: null } },
        consolidation: { pending_events: 1, every_events: 10, events_until_next: 9, last_consolidated_at: "2026-11-22T11:00:00.000Z" },
        rules: { dedupe: true, newest: null },
        end_date: null,
        push_url: `https://podium.test/v1/leaderboard/${id}/dataset/push`
      })
      expect(status.versions.map((v) => v.version)).toEqual([2, 1])
      // the next day's counts start from zero
      yield* TestClock.adjust("1 day")
      expect((yield* datasets.status(owner, id)).limits.daily.used).toBe(0)
    })))

  it("downloads the latest version, or the one asked for; none yet or an unknown one is not found", () =>
    run(Effect.gen(function*() {
      const datasets = yield* Datasets
      const id = yield* aLeaderboard()
      expect(yield* refusal(datasets.download(owner, id, undefined))).toMatchObject({ _tag: "NotFound", id: "latest" })
      yield* push(id, rows(1))
      yield* datasets.consolidate(owner, id)
      yield* push(id, rows(1, 1))
      yield* datasets.consolidate(owner, id)
      expect((yield* datasets.download(owner, id, undefined)).version.version).toBe(2)
      expect((yield* datasets.download(owner, id, 1)).version).toMatchObject({ version: 1, row_count: 1 })
      expect(yield* refusal(datasets.download(owner, id, 3))).toMatchObject({ _tag: "NotFound", id: "3" })
      expect(yield* refusal(datasets.download(stranger, id, 1))).toMatchObject({ _tag: "NotFound", resource: "leaderboard" })
    })))
})
