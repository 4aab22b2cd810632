import { DateTime, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { WorkspaceId } from "../shared/index.ts"
import { applyUpdate, CandidateId, challengeOf, Leaderboard, LeaderboardId, type UpdateInput } from "./Leaderboard.ts"
import { scheduleOf } from "./Schedule.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const t1 = DateTime.makeUnsafe("2026-11-22T11:00:00.000Z")
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const candidate = CandidateId.make(uuid(11))

const leaderboard = new Leaderboard({
  id: LeaderboardId.make(uuid(1)),
  workspace_id: WorkspaceId.make(uuid(2)),
  name: "Support answers",
  description: "",
  status: "active",
  chosen_model_strategy: "ranking_winner",
  chosen_leaderboard_model_id: null,
  schedule: {},
  challenge: challengeOf({ dataset_type: "PUSH" }),
  extra: { kept: 1 },
  created_at: t0,
  updated_at: t0,
  version: 3
})
const current = { leaderboard, candidates: [{ id: candidate }] }

const update = (input: Partial<UpdateInput>, from = current) => applyUpdate(from, { extra: {}, ...input }, t1)
const updated = (input: Partial<UpdateInput>, from = current) => Result.getOrThrow(update(input, from))
const failureOf = <A, E>(result: Result.Result<A, E>) => Result.isFailure(result) ? result.failure : undefined

describe("applyUpdate", () => {
  it("changes only what is sent, at the next version and the given time", () => {
    const next = updated({ name: "renamed" })
    expect(next).toEqual(new Leaderboard({ ...leaderboard, name: "renamed", version: 4, updated_at: t1 }))
  })

  it("challenge fields change the challenge and keep the rest of it", () => {
    const next = updated({ system_prompt: "Be brief.", dedupe: true })
    expect(next.challenge).toEqual({ ...leaderboard.challenge, system_prompt: "Be brief.", dedupe: true })
  })

  it("merges extra properties, never under a read-only field's name", () => {
    const next = updated({ extra: { color: "blue", id: "x", business_id: "y", challenge: {}, created_at: "z" } })
    expect(next.extra).toEqual({ kept: 1, color: "blue" })
    expect(next.id).toBe(leaderboard.id)
  })

  it("status running is the service's", () => {
    expect(failureOf(update({ status: "running" }))).toMatchObject({ _tag: "InvalidInput", path: ["status"] })
  })

  it("an archived leaderboard takes a status change and nothing else, not even a read-only extra", () => {
    const archived = { ...current, leaderboard: updated({ status: "archived" }) }
    expect(failureOf(update({ name: "x" }, archived))).toMatchObject({ _tag: "LeaderboardArchived" })
    expect(failureOf(update({ status: "active", extra: { id: "x" } }, archived))).toMatchObject({ _tag: "LeaderboardArchived" })
    expect(updated({ status: "active" }, archived).status).toBe("active")
  })

  it("a GET dataset's URL must be http(s)", () => {
    expect(failureOf(update({ dataset_type: "GET", dataset_url: "ftp://x" }))).toMatchObject({ path: ["dataset_url"] })
    expect(updated({ dataset_type: "GET", dataset_url: "https://data.example.com" }).challenge.dataset_url)
      .toBe("https://data.example.com")
  })

  it("manual serving needs a chosen candidate of this leaderboard", () => {
    expect(failureOf(update({ chosen_model_strategy: "manual" }))).toMatchObject({ path: ["chosen_leaderboard_model_id"] })
    expect(failureOf(update({ chosen_leaderboard_model_id: CandidateId.make(uuid(99)) })))
      .toMatchObject({ path: ["chosen_leaderboard_model_id"] })
    const manual = updated({ chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate })
    expect(manual).toMatchObject({ chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate })
    // once the candidate is gone (removal clears the choice) the same update is refused
    expect(failureOf(update({ chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate }, { leaderboard, candidates: [] })))
      .toMatchObject({ path: ["chosen_leaderboard_model_id"] })
  })
})

/** Updates that always pass the checks, over independent fields (extra properties by prefix). */
const anUpdate = (extraPrefix: string) =>
  fc.record({
    name: fc.string({ minLength: 1, maxLength: 5 }),
    description: fc.string({ maxLength: 5 }),
    status: fc.constantFrom("active" as const, "paused" as const),
    schedule: fc.constantFrom({}, { cron: "0 * * * *" }, { cron: "*/5 9-17 * * 1-5", timezone: "Europe/Paris" }),
    system_prompt: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
    judge_model: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
    dedupe: fc.boolean(),
    daily_event_limit: fc.option(fc.nat(), { nil: null }),
    extra: fc.dictionary(fc.string({ maxLength: 3 }).map((key) => extraPrefix + key), fc.integer())
  }, { requiredKeys: ["extra"] })

/** Two updates that send different fields (each keeps its own extra properties). */
const twoUpdatesOfDifferentFields = fc.tuple(anUpdate("a_"), anUpdate("b_"), fc.func(fc.boolean())).map(([a, b, toA]) => {
  const only = <T extends object>(input: T, keep: (key: string) => boolean) =>
    Object.fromEntries(Object.entries(input).filter(([key]) => key === "extra" || keep(key))) as T
  return [only(a, (key) => toA(key)), only(b, (key) => !toA(key))] as const
})

describe("applyUpdate, for any update", () => {
  it("sets what is sent, keeps the rest, and moves to the next version", () => {
    fc.assert(fc.property(anUpdate("x_"), (input) => {
      const next = updated(input)
      const { extra, schedule, status, ...rest } = input
      expect(next.version).toBe(leaderboard.version + 1)
      expect(next.status).toBe(status ?? leaderboard.status)
      expect(next.schedule).toEqual(schedule === undefined ? leaderboard.schedule : { ...Result.getOrThrow(scheduleOf(schedule, t1)) })
      expect(next.extra).toEqual({ ...leaderboard.extra, ...extra })
      expect({ ...next, ...next.challenge }).toMatchObject(rest)
      expect(next.created_at).toBe(leaderboard.created_at)
    }))
  })

  it("updates of different fields give the same leaderboard in either order: a retried update loses nothing", () => {
    fc.assert(fc.property(twoUpdatesOfDifferentFields, ([a, b]) => {
      const ab = updated(b, { ...current, leaderboard: updated(a) })
      const ba = updated(a, { ...current, leaderboard: updated(b) })
      expect(ab).toEqual(ba)
      expect(ab.version).toBe(leaderboard.version + 2)
    }))
  })
})
