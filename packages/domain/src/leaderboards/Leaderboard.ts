import { type DateTime, Result, Schema } from "effect"
import { InvalidInput, WorkspaceId } from "../shared/index.ts"
import { scheduleOf } from "./Schedule.ts"
import { applyServingPolicyPatch, defaultServingPolicy, ServingPolicy, type ServingPolicyPatch } from "./ServingPolicy.ts"

export const LeaderboardId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("LeaderboardId"))
export type LeaderboardId = typeof LeaderboardId.Type

export const CandidateId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("CandidateId"))
export type CandidateId = typeof CandidateId.Type

export const DatasetType = Schema.Literals(["GET", "PUSH"])
export const EvalType = Schema.Literals(["exact", "judge", "human"])
export const ChosenModelStrategy = Schema.Literals(["ranking_winner", "manual"])

/**
 * `active` (default); `running` while a run is in progress (set by the service only); `paused`
 * (schedules and push ingestion stop, inference continues); `archived` (read-only).
 */
export const LeaderboardStatus = Schema.Literals(["active", "running", "paused", "archived"])
export type LeaderboardStatus = typeof LeaderboardStatus.Type
export const SettableStatus = Schema.Literals(["active", "paused", "archived"])

/** The evaluation task of a leaderboard. */
export const Challenge = Schema.Struct({
  system_prompt: Schema.NullOr(Schema.String),
  model_prompt: Schema.NullOr(Schema.String),
  eval_type: EvalType,
  judge_provider: Schema.NullOr(Schema.String),
  judge_model: Schema.NullOr(Schema.String),
  dataset_type: DatasetType,
  dataset_url: Schema.NullOr(Schema.String),
  auto_limit_size: Schema.Boolean,
  max_samples_to_gather: Schema.NullOr(Schema.Int),
  daily_event_limit: Schema.NullOr(Schema.Int),
  monthly_event_limit: Schema.NullOr(Schema.Int),
  consolidate_every_events: Schema.NullOr(Schema.Int),
  consolidate_every_hours: Schema.NullOr(Schema.Int),
  dedupe: Schema.Boolean,
  end_date: Schema.NullOr(Schema.String)
})
export type Challenge = typeof Challenge.Type

export class Leaderboard extends Schema.Class<Leaderboard>("Leaderboard")({
  id: LeaderboardId,
  workspace_id: WorkspaceId,
  name: Schema.String,
  description: Schema.String,
  status: LeaderboardStatus,
  chosen_model_strategy: ChosenModelStrategy,
  chosen_leaderboard_model_id: Schema.NullOr(CandidateId),
  schedule: Schema.Record(Schema.String, Schema.Unknown),
  challenge: Challenge,
  /** Properties clients sent that the service does not know; kept and returned (open object). */
  extra: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  /** Counts the changes made to the leaderboard (and its candidate list): a write names the one it read. */
  version: Schema.Int,
  /** When a run may replace the serving candidate, as set; absent: the defaults (`servingPolicyOf`). */
  serving_policy: Schema.optionalKey(ServingPolicy)
}) {}

/** The leaderboard's serving policy in effect: as set, else the defaults. */
export const servingPolicyOf = (leaderboard: Pick<Leaderboard, "serving_policy">): ServingPolicy =>
  leaderboard.serving_policy ?? defaultServingPolicy

const httpUrl = /^https?:\/\/[^\s/]+/

/**
 * A GET dataset is fetched from its URL, so a URL given must be http(s). It may be missing at
 * create (set it later); a run without a usable dataset is 409 `dataset_missing`.
 */
export const checkDataset = (challenge: Pick<Challenge, "dataset_type" | "dataset_url">): Result.Result<void, InvalidInput> =>
  challenge.dataset_type === "GET" && challenge.dataset_url !== null && !httpUrl.test(challenge.dataset_url)
    ? Result.fail(new InvalidInput({
      message: "A GET dataset's dataset_url must be an http(s) URL",
      path: ["dataset_url"]
    }))
    : Result.void

/** `manual` serving needs a chosen candidate, and a chosen candidate must belong to the leaderboard. */
export const checkChoice = (
  leaderboard: Pick<Leaderboard, "chosen_model_strategy" | "chosen_leaderboard_model_id">,
  candidates: ReadonlyArray<CandidateId>
): Result.Result<void, InvalidInput> => {
  const chosen = leaderboard.chosen_leaderboard_model_id
  if (chosen !== null && !candidates.includes(chosen)) {
    return Result.fail(new InvalidInput({
      message: "chosen_leaderboard_model_id must be a candidate of this leaderboard",
      path: ["chosen_leaderboard_model_id"]
    }))
  }
  if (leaderboard.chosen_model_strategy === "manual" && chosen === null) {
    return Result.fail(new InvalidInput({
      message: "The manual strategy needs a chosen_leaderboard_model_id",
      path: ["chosen_leaderboard_model_id"]
    }))
  }
  return Result.void
}

export class LeaderboardArchived extends Schema.TaggedError<LeaderboardArchived>()("LeaderboardArchived", {
  leaderboard_id: Schema.String
}) {}

/**
 * Status changes a client may make: between active, paused and archived, never into or out of
 * `running` (the service owns that); an archived leaderboard accepts nothing but a status change.
 */
export const checkUpdate = (
  current: Pick<Leaderboard, "id" | "status">,
  update: { readonly status?: string | undefined; readonly changesOtherFields: boolean }
): Result.Result<void, InvalidInput | LeaderboardArchived> => {
  if (update.status === "running") {
    return Result.fail(new InvalidInput({ message: "status running is set by the service", path: ["status"] }))
  }
  if (current.status === "archived" && update.changesOtherFields) {
    return Result.fail(new LeaderboardArchived({ leaderboard_id: current.id }))
  }
  return Result.void
}

export type ChallengeInput = Partial<{ -readonly [K in keyof Challenge]: Challenge[K] | undefined }>

/** A PATCH: what it sends changes, what it leaves out stays. */
export interface UpdateInput extends ChallengeInput {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly status?: LeaderboardStatus | undefined
  readonly chosen_model_strategy?: typeof ChosenModelStrategy.Type | undefined
  readonly chosen_leaderboard_model_id?: CandidateId | null | undefined
  readonly schedule?: Readonly<Record<string, unknown>> | undefined
  /** Changes the fields it names of the policy in effect; each must stay in range. */
  readonly serving_policy?: ServingPolicyPatch | undefined
  /** Every other property of the (open) request: stored and returned, unless it names a read-only field. */
  readonly extra: Readonly<Record<string, unknown>>
}

/** The challenge `input` describes, with `base` (else the defaults) for what it leaves out. */
export const challengeOf = (input: ChallengeInput, base?: Challenge): Challenge => {
  const pick = <K extends keyof Challenge>(key: K, fallback: Challenge[K]): Challenge[K] =>
    input[key] !== undefined ? input[key] as Challenge[K] : base !== undefined ? base[key] : fallback
  return {
    system_prompt: pick("system_prompt", null),
    model_prompt: pick("model_prompt", null),
    eval_type: pick("eval_type", "exact"),
    judge_provider: pick("judge_provider", null),
    judge_model: pick("judge_model", null),
    dataset_type: pick("dataset_type", "GET"),
    dataset_url: pick("dataset_url", null),
    auto_limit_size: pick("auto_limit_size", false),
    max_samples_to_gather: pick("max_samples_to_gather", null),
    daily_event_limit: pick("daily_event_limit", null),
    monthly_event_limit: pick("monthly_event_limit", null),
    consolidate_every_events: pick("consolidate_every_events", null),
    consolidate_every_hours: pick("consolidate_every_hours", null),
    dedupe: pick("dedupe", false),
    end_date: pick("end_date", null)
  }
}

/** The leaderboard's own read-only fields, as stored and as shown: an extra property never shadows one. */
const readOnlyFields: ReadonlySet<string> = new Set([
  "id", "business_id", "workspace_id", "created_at", "updated_at", "deleted_at", "challenge"
])

/**
 * `current` after a PATCH, at the next version. Sending anything but `status` counts as a change
 * (an archived leaderboard refuses it), and the result must name a usable dataset and, if any, a
 * chosen candidate among `current.candidates`.
 */
export const applyUpdate = (
  current: { readonly leaderboard: Leaderboard; readonly candidates: ReadonlyArray<{ readonly id: CandidateId }> },
  input: UpdateInput,
  now: DateTime.Utc
): Result.Result<Leaderboard, InvalidInput | LeaderboardArchived> =>
  Result.gen(function*() {
    const { leaderboard } = current
    const { extra, status, ...fields } = input
    const changesOtherFields = Object.values(fields).some((value) => value !== undefined) || Object.keys(extra).length > 0
    yield* checkUpdate(leaderboard, { status, changesOtherFields })
    const challenge = challengeOf(input, leaderboard.challenge)
    yield* checkDataset(challenge)
    const servingPolicy = input.serving_policy === undefined
      ? leaderboard.serving_policy
      : yield* applyServingPolicyPatch(servingPolicyOf(leaderboard), input.serving_policy, ["serving_policy"])
    const next = new Leaderboard({
      ...leaderboard,
      name: input.name ?? leaderboard.name,
      description: input.description ?? leaderboard.description,
      status: status === undefined || status === "running" ? leaderboard.status : status,
      chosen_model_strategy: input.chosen_model_strategy ?? leaderboard.chosen_model_strategy,
      chosen_leaderboard_model_id: input.chosen_leaderboard_model_id === undefined
        ? leaderboard.chosen_leaderboard_model_id
        : input.chosen_leaderboard_model_id,
      schedule: input.schedule === undefined ? leaderboard.schedule : { ...yield* scheduleOf(input.schedule, now) },
      challenge,
      extra: {
        ...leaderboard.extra,
        ...Object.fromEntries(Object.entries(extra).filter(([key]) => !readOnlyFields.has(key)))
      },
      updated_at: now,
      version: leaderboard.version + 1,
      ...(servingPolicy === undefined ? {} : { serving_policy: servingPolicy })
    })
    yield* checkChoice(next, current.candidates.map((c) => c.id))
    return next
  })
