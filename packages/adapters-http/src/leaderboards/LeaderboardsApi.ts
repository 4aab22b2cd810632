import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AuthType,
  Candidate,
  Platform,
  CandidateId,
  Challenge,
  ChosenModelStrategy,
  DatasetType,
  EvalType,
  LeaderboardId,
  LeaderboardStatus,
  ServingActor,
  ServingEntryId,
  ServingEntryKind,
  ServingPolicy,
  ServingPolicyPatch,
} from "@podium/domain/leaderboards"
import { WorkspaceId } from "@podium/domain/shared"
import { Forbidden, NotFound } from "../api/Errors.ts"
import { LeaderboardArchived, NoPreviousServing } from "./LeaderboardsErrors.ts"
import { CursorPage, cursorQuery, Label, Timestamp } from "../api/Schemas.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"
import { RunView } from "../runs/RunView.ts"

const OpenRecord = Schema.Record(Schema.String, Schema.Json)
/** Inside open objects every value must be JSON, so timestamps are carried as their ISO strings. */
const IsoTimestamp = Schema.String.annotate({ format: "date-time", description: "ISO 8601 UTC with milliseconds" })
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The leaderboard (an open object: properties a client added through PATCH come back as sent). */
export const LeaderboardView = Schema.StructWithRest(
  Schema.Struct({
    id: LeaderboardId,
    business_id: WorkspaceId,
    name: Schema.String,
    description: Schema.String,
    status: LeaderboardStatus,
    dataset_type: DatasetType,
    dataset_url: Schema.NullOr(Schema.String),
    eval_type: EvalType,
    chosen_model_strategy: ChosenModelStrategy,
    chosen_leaderboard_model_id: Schema.NullOr(CandidateId),
    schedule: OpenRecord,
    serving_policy: ServingPolicy.annotate({
      identifier: "ServingPolicy",
      description: "When a run may replace the serving candidate: the policy in effect (the defaults unless set)"
    }),
    created_at: IsoTimestamp,
    updated_at: IsoTimestamp
  }),
  [OpenRecord]
).annotate({ identifier: "Leaderboard" })

export const ChallengeView = Challenge.annotate({ identifier: "Challenge" })

/** The candidate as stored, never its credential (`has_token` says whether it has one). */
export const CandidateView = Schema.Struct({ ...Candidate.fields, created_at: Timestamp }).annotate({
  identifier: "Candidate"
})

const ChallengeFields = {
  system_prompt: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(32_000))),
  model_prompt: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(32_000))),
  dataset_type: Schema.optionalKey(DatasetType),
  dataset_url: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048))),
  eval_type: Schema.optionalKey(EvalType),
  judge_provider: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))),
  judge_model: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))),
  auto_limit_size: Schema.optionalKey(Schema.Boolean),
  max_samples_to_gather: Schema.optionalKey(Count),
  daily_event_limit: Schema.optionalKey(Count),
  monthly_event_limit: Schema.optionalKey(Count),
  consolidate_every_events: Schema.optionalKey(Count),
  consolidate_every_hours: Schema.optionalKey(Count),
  dedupe: Schema.optionalKey(Schema.Boolean),
  end_date: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/, {
    message: "Expected an ISO 8601 date-time"
  })))
}

export const CreateLeaderboardRequest = Schema.Struct({
  name: Label(200),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4000))),
  business_id: Schema.optionalKey(WorkspaceId),
  ...ChallengeFields
})

/** Open: properties the service does not know are kept on the leaderboard and returned. */
export const UpdateLeaderboardRequest = Schema.StructWithRest(
  Schema.Struct({
    name: Schema.optionalKey(Label(200)),
    description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4000))),
    status: Schema.optionalKey(LeaderboardStatus),
    chosen_model_strategy: Schema.optionalKey(ChosenModelStrategy),
    chosen_leaderboard_model_id: Schema.optionalKey(Schema.NullOr(CandidateId)),
    schedule: Schema.optionalKey(OpenRecord),
    serving_policy: Schema.optionalKey(ServingPolicyPatch.annotate({
      description: "Changes the fields given of the policy in effect: alpha in (0, 1), min_rows ≥ 1 (whole), " +
        "margin in [0, 1), switch_when significantly_better or non_inferior_and_cheaper; out of range is a 400"
    })),
    ...ChallengeFields
  }),
  [OpenRecord]
)

/** One decision about what a leaderboard serves. */
export const ServingHistoryEntryView = Schema.Struct({
  id: ServingEntryId,
  leaderboard_id: LeaderboardId,
  at: Timestamp,
  kind: ServingEntryKind,
  from_candidate_id: Schema.NullOr(CandidateId),
  to_candidate_id: Schema.NullOr(CandidateId),
  actor: ServingActor,
  evidence: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ServingHistoryEntry" })

export const AddCandidateRequest = Schema.Struct({
  name: Label(200),
  model_name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(300))),
  platform: Schema.optionalKey(Platform),
  url: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048)).annotate({
    description: "Alias of model_url; given with model_url, the two must be equal (else 400)"
  })),
  model_url: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048)).annotate({
    description: "The candidate's endpoint; Custom: its OpenAI-compatible base URL (`{model_url}/chat/completions` is called)"
  })),
  model_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
  token: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(8192))),
  auth_type: Schema.optionalKey(AuthType),
  auth_header_name: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[A-Za-z0-9-]{1,100}$/))),
  input_price_per_m_tokens: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  output_price_per_m_tokens: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
})

/** `limit` 1–1000 (default 100) and `offset` ≥ 0 (default 0); out of range is a 400. */
export const PageQuery = {
  limit: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))),
  offset: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)))
}

const LeaderboardParams = { leaderboard_id: LeaderboardId }
const Deleted = <S extends Schema.Top>(id: S) => Schema.Struct({ id, deleted: Schema.Literal(true) })
const read = "leaderboards:read" as const
const write = "leaderboards:write" as const

export class LeaderboardsApi extends HttpApiGroup.make("leaderboards")
  .add(
    HttpApiEndpoint.get("list", "/api/leaderboards", {
      query: { ...PageQuery, business_id: Schema.optionalKey(WorkspaceId) },
      success: Schema.Struct({
        leaderboards: Schema.Array(LeaderboardView),
        next_offset: Schema.NullOr(Schema.Int)
      }),
      error: Forbidden
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "List leaderboards, newest first"),
    HttpApiEndpoint.post("create", "/api/leaderboards", {
      payload: CreateLeaderboardRequest,
      success: Schema.Struct({ leaderboard: LeaderboardView, challenge: ChallengeView }).pipe(HttpApiSchema.status(201)),
      error: Forbidden
    }).annotateMerge(requiresScope(write)).annotate(OpenApi.Summary, "Create a leaderboard"),
    HttpApiEndpoint.get("get", "/api/leaderboards/:leaderboard_id", {
      params: LeaderboardParams,
      success: Schema.Struct({
        leaderboard: LeaderboardView,
        challenge: ChallengeView,
        models: Schema.Array(CandidateView),
        runs: Schema.Array(RunView).annotate({ description: "The 20 newest runs, newest first" })
      }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "A leaderboard with its challenge, candidates and runs"),
    HttpApiEndpoint.patch("update", "/api/leaderboards/:leaderboard_id", {
      params: LeaderboardParams,
      payload: UpdateLeaderboardRequest,
      success: Schema.Struct({ leaderboard: LeaderboardView, challenge: ChallengeView }),
      error: [NotFound, LeaderboardArchived]
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Change a leaderboard",
      description: "Partial. Unknown properties are kept and returned. `status` may be set to active, paused or " +
        "archived (`running` is the service's); an archived leaderboard accepts only a status change (409 " +
        "`leaderboard_archived`). `manual` needs `chosen_leaderboard_model_id`, which must be a candidate."
    })),
    HttpApiEndpoint.delete("remove", "/api/leaderboards/:leaderboard_id", {
      params: LeaderboardParams,
      success: Deleted(LeaderboardId),
      error: NotFound
    }).annotateMerge(requiresScope(write)).annotate(OpenApi.Summary, "Delete a leaderboard (then 404 everywhere)"),
    HttpApiEndpoint.get("listModels", "/api/leaderboards/:leaderboard_id/models", {
      params: LeaderboardParams,
      success: Schema.Struct({ models: Schema.Array(CandidateView) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "List a leaderboard's candidate models"),
    HttpApiEndpoint.post("addModel", "/api/leaderboards/:leaderboard_id/models", {
      params: LeaderboardParams,
      payload: AddCandidateRequest,
      success: Schema.Struct({ model: CandidateView }).pipe(HttpApiSchema.status(201)),
      error: [NotFound, LeaderboardArchived]
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Add a candidate model",
      description: "Router and Hub need `model_name` (the provider's model id); Custom needs `model_url` (or its " +
        "alias `url`; both given must be equal), the OpenAI-compatible base URL (`{model_url}/chat/completions` is " +
        "called; the candidate returns it as both `model_url` and `url`) and `auth_type` bearer (default), " +
        "header (with `auth_header_name`) or none; Service needs `model_id`. `token` is stored encrypted and " +
        "never returned (`has_token`)."
    })),
    HttpApiEndpoint.delete("removeModel", "/api/leaderboards/:leaderboard_id/models/:leaderboard_model_id", {
      params: { ...LeaderboardParams, leaderboard_model_id: CandidateId },
      success: Deleted(CandidateId),
      error: [NotFound, LeaderboardArchived]
    }).annotateMerge(requiresScope(write)).annotate(OpenApi.Summary, "Remove a candidate model"),
    HttpApiEndpoint.get("servingHistory", "/api/leaderboards/:leaderboard_id/serving-history", {
      params: LeaderboardParams,
      query: cursorQuery(ServingEntryId),
      success: CursorPage(ServingHistoryEntryView, ServingEntryId),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "A leaderboard's serving history, newest first",
      description: "Every decision about what the leaderboard serves: `manual` (a PATCH of chosen_model_strategy " +
        "or chosen_leaderboard_model_id), `run` (a run's decision, keep included), `human` (the human ranking's, " +
        "recorded only when it changes what the ranking serves, a `first` or a `switch` of the serving policy: " +
        "every confirmed review decides again, and a `keep` after each would flood the history) and " +
        "`rollback`, with the candidate serving before (`from_candidate_id`) and after (`to_candidate_id`), who " +
        "made it (`actor`: user, api_token or system, with `run_id` for a run's) and its `evidence`. Entries are " +
        "never changed or removed. `limit` 1–100 (default 20); `cursor` is the previous page's `next_cursor`."
    })),
    HttpApiEndpoint.post("rollback", "/api/leaderboards/:leaderboard_id/serving/rollback", {
      params: LeaderboardParams,
      success: Schema.Struct({
        leaderboard: LeaderboardView,
        serving_candidate_id: CandidateId.annotate({ description: "The candidate the leaderboard serves now" }),
        entry: ServingHistoryEntryView
      }),
      error: [NotFound, LeaderboardArchived, NoPreviousServing]
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Serve the previous candidate again",
      description: "Returns serving to the candidate that served before the newest change of what serves (the " +
        "`from_candidate_id` of the newest history entry whose from and to differ): under `manual` as " +
        "chosen_leaderboard_model_id, otherwise as the ranking's winner until the next ranking. Recorded as a " +
        "`rollback` entry (so a second rollback undoes the first). 409 `no_previous_serving` when nothing has " +
        "changed what serves or that candidate was removed."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Leaderboards",
    description: "Leaderboards and their candidates, what each serves (chosen by hand or by the ranking), the serving " +
      "history and rollback."
  }))
{}
