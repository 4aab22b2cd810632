import { DateTime, Result } from "effect"
import { describe, expect, it } from "vitest"
import { Candidate, CandidateId, challengeOf, LeaderboardId } from "../leaderboards/index.ts"
import { runnable } from "./Run.ts"

const t0 = DateTime.makeUnsafe("2026-11-23T10:00:00.000Z")
const id = LeaderboardId.make("018f0000-0000-7000-8000-000000000001")
const candidate = (n: number) =>
  new Candidate({
    id: CandidateId.make(`018f0000-0000-7000-8000-00000000010${n}`),
    leaderboard_id: id,
    name: `c${n}`,
    platform: "Custom",
    model_name: null,
    model_url: null,
    url: "https://models.example.com/v1",
    model_id: null,
    auth_type: "none",
    auth_header_name: null,
    has_token: false,
    input_price_per_m_tokens: null,
    output_price_per_m_tokens: null,
    created_at: t0
  })
const [a, b] = [candidate(1), candidate(2)]
const board = (challenge: Parameters<typeof challengeOf>[0], status: "active" | "paused" | "archived" = "active") => ({
  id,
  status,
  challenge: challengeOf({ dataset_type: "GET", dataset_url: "https://data.example.com/qa.jsonl", ...challenge })
})
const refusal = (result: ReturnType<typeof runnable>) => Result.isFailure(result) ? result.failure._tag : "ok"

describe("runnable", () => {
  it("asks every candidate, or those named; paused leaderboards run too", () => {
    expect(Result.getOrThrow(runnable(board({}), [a, b], undefined, false))).toEqual([a, b])
    expect(Result.getOrThrow(runnable(board({}), [a, b], [], false))).toEqual([a, b])
    expect(Result.getOrThrow(runnable(board({}, "paused"), [a, b], [b.id], false))).toEqual([b])
  })

  it("refuses what cannot run, each with its reason", () => {
    expect(refusal(runnable(board({}, "archived"), [a], undefined, false))).toBe("LeaderboardArchived")
    expect(refusal(runnable(board({ eval_type: "human" }), [a, b], undefined, false))).toBe("NotRunnable")
    expect(refusal(runnable(board({ eval_type: "judge", judge_provider: "openai", judge_model: "x" }), [a], undefined, false))).toBe("NotRunnable")
    expect(refusal(runnable(board({ eval_type: "judge", judge_provider: "router", judge_model: "x" }), [a], undefined, false))).toBe("ok")
    expect(refusal(runnable(board({}), [a], ["018f0000-0000-7000-8000-000000000999"], false))).toBe("InvalidInput")
    expect(refusal(runnable(board({}), [], undefined, false))).toBe("NotRunnable")
    expect(refusal(runnable(board({ dataset_url: null }), [a], undefined, false))).toBe("DatasetMissing")
    expect(refusal(runnable(board({ dataset_type: "PUSH", dataset_url: null }), [a], undefined, false))).toBe("DatasetMissing")
    expect(refusal(runnable(board({ dataset_type: "PUSH", dataset_url: null }), [a], undefined, true))).toBe("ok")
  })
})
