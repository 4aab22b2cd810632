import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { maxListedRejections, maxPushBytes, maxRowsPerPush } from "@podium/domain/datasets"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { PushTokenId } from "@podium/domain/shared"
import { NotFound, PayloadTooLarge } from "../api/Errors.ts"
import {
  CollectionEnded,
  EventLimitExceeded,
  LeaderboardPaused,
  NoLabeller,
  NotPushDataset
} from "./DatasetsErrors.ts"
import { LeaderboardArchived } from "../leaderboards/LeaderboardsErrors.ts"
import { ApiTokenAuth, PushAuth, requiresScope } from "../api/Security.ts"

const Text = Schema.optionalKey(Schema.NullOr(Schema.String))

/** A pushed row (open): the spec's fields with their types; every other field is kept as sent. */
export const PushRow = Schema.StructWithRest(
  Schema.Struct({
    id: Text.annotate({ description: "The row's own id: a retry with the same id is stored once" }),
    input: Text,
    prompt: Text,
    question: Text,
    query: Text,
    output: Text,
    expected: Text,
    response: Text,
    completion: Text,
    answer: Text,
    rubric: Text,
    trace_id: Text,
    session_id: Text,
    user_id: Text,
    messages: Schema.optionalKey(Schema.Array(Schema.Record(Schema.String, Schema.Unknown))),
    metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
    tags: Schema.optionalKey(Schema.Array(Schema.String)),
    latency_ms: Schema.optionalKey(Schema.Finite),
    cost_usd: Schema.optionalKey(Schema.Finite)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

const documentedBody = Schema.Union([
  PushRow,
  Schema.Array(PushRow),
  Schema.Struct({
    rows: Schema.optionalKey(Schema.Array(PushRow)),
    events: Schema.optionalKey(Schema.Array(PushRow)),
    samples: Schema.optionalKey(Schema.Array(PushRow))
  })
])

/**
 * The push body as the OpenAPI document shows it; decoding takes any JSON, because rows are checked
 * one by one (a bad row is rejected in the answer, never the whole push). `Any`, not `Unknown`:
 * Unknown's JSON codec walks the whole body again (about 1 ms per 1,000 rows).
 */
export const PushBody = Schema.Any.check(Schema.makeFilter(() => true, {
  toJsonSchema: () => Schema.toJsonSchemaDocument(documentedBody).schema
})).annotate({
  description: "One row, an array of rows, or an object with any of rows, events and samples (arrays of rows)"
})

const Limit = Schema.Struct({
  used: Schema.Int,
  limit: Schema.NullOr(Schema.Int),
  resets_at: Schema.String.annotate({ description: "UTC midnight when the count starts again" })
})

export const Limits = Schema.Struct({ daily: Limit, monthly: Limit }).annotate({ identifier: "DatasetLimits" })

export const Consolidation = Schema.Struct({
  pending_events: Schema.Int,
  every_events: Schema.NullOr(Schema.Int),
  every_hours: Schema.NullOr(Schema.Int),
  events_until_next: Schema.NullOr(Schema.Int),
  next_at: Schema.NullOr(Schema.String).annotate({ description: "When the hours trigger fires next (null with nothing pending)" }),
  last_consolidated_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DatasetConsolidation" })

export const PushResponse = Schema.Struct({
  accepted_rows: Schema.Int.annotate({ description: "Rows stored by this push, retries included" }),
  rejected_rows: Schema.Int,
  duplicate_rows: Schema.Int.annotate({ description: "Rows whose id was stored before: accepted, stored once, counted once" }),
  status: Schema.Literals(["accepted", "partial"]),
  batch_id: Schema.String,
  pending_events: Schema.Int,
  limits: Limits,
  consolidation: Schema.Struct({
    ...Consolidation.fields,
    triggered: Schema.NullOr(Schema.Literal("events")).annotate({
      description: "`events` when this push reached consolidate_every_events (the version is made in the background)"
    })
  }),
  rejections: Schema.Array(Schema.Struct({
    index: Schema.Int,
    code: Schema.Literals(["invalid_row", "missing_input", "unstorable_text", "event_limit_exceeded"]),
    message: Schema.String
  })).annotate({ description: `The first ${maxListedRejections} rejected rows, by index in the push` })
}).annotate({ identifier: "PushResponse" })

export const DatasetVersion = Schema.Struct({
  version: Schema.Int,
  row_count: Schema.Int,
  added_rows: Schema.Int.annotate({ description: "Pending rows this version took in (duplicates not counted)" }),
  dropped_duplicates: Schema.Int,
  labelled_rows: Schema.Int,
  trigger: Schema.Literals(["manual", "events", "hours", "auto_labels"]),
  sha256: Schema.NullOr(Schema.String).annotate({ description: "SHA-256 of the version's JSONL download" }),
  created_at: Schema.String
}).annotate({ identifier: "DatasetVersion" })

export const LabelJob = Schema.Struct({
  job_id: Schema.String,
  status: Schema.Literals(["running", "succeeded", "failed"]),
  base_version: Schema.Int.annotate({ description: "The version whose rows are labelled" }),
  labeller: Schema.String.annotate({ description: "`router:<model>`/`hub:<model>` (the judge) or the serving candidate's model_name, else its name" }),
  total: Schema.Int.annotate({ description: "Rows without a reference when the job started" }),
  labelled: Schema.Int,
  failed: Schema.Int.annotate({ description: "Rows the labeller gave no answer for, after retries" }),
  remaining: Schema.Int,
  version: Schema.NullOr(Schema.Int).annotate({ description: "The version that published the labels" }),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "LabelJob" })

export const DatasetStatus = Schema.Struct({
  leaderboard_id: LeaderboardId,
  dataset_type: Schema.Literals(["GET", "PUSH"]),
  pending_events: Schema.Int,
  latest_version: Schema.NullOr(DatasetVersion),
  versions: Schema.Array(DatasetVersion),
  limits: Limits,
  consolidation: Consolidation,
  rules: Schema.Struct({ dedupe: Schema.Boolean, newest: Schema.NullOr(Schema.Int) }),
  end_date: Schema.NullOr(Schema.String),
  push_url: Schema.String,
  labelling: Schema.NullOr(LabelJob).annotate({ description: "The newest auto-labels job, with its progress" })
}).annotate({ identifier: "DatasetStatus" })

export const PushToken = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  display_prefix: Schema.String,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PushToken" })

const params = { leaderboard_id: LeaderboardId }

const pushDescription = `Stores rows in the leaderboard's PUSH dataset, where they wait (pending) for the next ` +
  `consolidation. The body is one row, an array of rows, or {rows|events|samples}; at most ${maxRowsPerPush} rows ` +
  `and ${maxPushBytes} bytes (413 beyond). Each row is checked alone: a row that is not an object, has a field of ` +
  `the wrong type, has no input (messages, input, prompt, question or query) or holds U+0000 or a lone surrogate ` +
  `is rejected and listed in \`rejections\`, and the rest are stored. 202 means the accepted rows are committed. ` +
  `A row's \`id\` makes retries safe: a row whose id is stored already counts as accepted (\`duplicate_rows\`) ` +
  `and is neither stored nor counted again. daily_event_limit and monthly_event_limit count stored rows per UTC ` +
  `day and month, enforced in the insert's transaction (concurrent pushes never overshoot): rows over a limit are ` +
  `rejected with code event_limit_exceeded, and when no row fits the answer is 429 event_limit_exceeded with ` +
  `Retry-After. 409 leaderboard_paused, leaderboard_archived, collection_ended (after end_date) and ` +
  `not_push_dataset (a GET dataset). Every stored row is exported as a trace with source \`dataset\`.`

/** Push, status and download: an API token with the scope, or the leaderboard's push token. */
export class PushDatasetsApi extends HttpApiGroup.make("pushDatasets")
  .add(
    HttpApiEndpoint.post("push", "/v1/leaderboard/:leaderboard_id/dataset/push", {
      params,
      payload: PushBody,
      success: PushResponse.pipe(HttpApiSchema.status(202)),
      error: [NotFound, PayloadTooLarge, NotPushDataset, LeaderboardArchived, LeaderboardPaused, CollectionEnded, EventLimitExceeded]
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Push dataset rows",
      description: pushDescription
    })),
    HttpApiEndpoint.get("status", "/v1/leaderboard/:leaderboard_id/dataset/status", {
      params,
      success: DatasetStatus,
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:read")).annotateMerge(OpenApi.annotations({
      summary: "Dataset status",
      description: "Pending rows, versions (row counts and SHA-256 of each download), the event limits used and " +
        "when they reset, the last and next consolidation, and the consolidation rules."
    })),
    HttpApiEndpoint.get("download", "/v1/leaderboard/:leaderboard_id/dataset", {
      params,
      query: {
        version: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)))
      },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/jsonl" })),
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:read")).annotateMerge(OpenApi.annotations({
      summary: "Download a consolidated dataset version as JSONL",
      description: "The latest version (or `?version=`), one row per line in arrival order, every field as it was " +
        "pushed; an auto-labelled row carries `expected`, `label_source: \"auto\"` and `label_model`. Streamed: " +
        "memory stays flat whatever the size. Headers X-Service-Dataset-Version and, once computed, " +
        "X-Service-Dataset-Sha256. 404 before the first consolidation."
    }))
  )
  .middleware(PushAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Push Datasets",
    description: "Rows pushed to a leaderboard's dataset, its status and its consolidated versions as JSONL: with an " +
      "API token or the leaderboard's push token."
  }))
{}

/** Tokens and consolidation: API tokens (and sessions) only. */
export class DatasetAdminApi extends HttpApiGroup.make("datasetAdmin")
  .add(
    HttpApiEndpoint.post("issueToken", "/v1/leaderboard/:leaderboard_id/dataset/token", {
      params,
      // body optional: none at all is null (the platform decodes an empty body as null only when null is a payload)
      payload: [Schema.Struct({
        name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
        issue_token: Schema.optionalKey(Schema.Boolean)
      }), Schema.Null],
      success: Schema.Struct({
        token: Schema.optionalKey(PushToken),
        secret: Schema.optionalKey(Schema.String.annotate({ description: "The push token (`hpd_…`): shown this once" })),
        tokens: Schema.Array(PushToken),
        push_url: Schema.String,
        header: Schema.Literal("X-Service-Push-Token")
      }),
      error: [NotFound, NotPushDataset, LeaderboardArchived]
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Create a push token",
      description: "Creates a push token for this leaderboard's dataset (its secret is in the answer this once and " +
        "stored only as a digest) unless `issue_token` is false; either way lists the dataset's tokens without " +
        "secrets and the push URL. A push token works for push, status and download of this leaderboard only."
    })),
    HttpApiEndpoint.delete("revokeTokens", "/v1/leaderboard/:leaderboard_id/dataset/tokens", {
      params,
      success: Schema.Struct({ revoked: Schema.Int }),
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Revoke the dataset's push tokens",
      description: "Every active push token of this leaderboard stops working at once."
    })),
    HttpApiEndpoint.delete("revokeToken", "/v1/leaderboard/:leaderboard_id/dataset/tokens/:token_id", {
      params: { ...params, token_id: PushTokenId },
      success: HttpApiSchema.NoContent,
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Revoke one push token",
      description: "This push token stops working at once (a push with it gets 401); the leaderboard's other push " +
        "tokens keep working. 204 also when it was already revoked; 404 for a token of another leaderboard or none."
    })),
    HttpApiEndpoint.post("consolidate", "/v1/leaderboard/:leaderboard_id/dataset/consolidate", {
      params,
      success: Schema.Struct({
        version: Schema.NullOr(DatasetVersion).annotate({ description: "The new version; null when nothing was pending" }),
        pending_events: Schema.Int
      }),
      error: [NotFound, NotPushDataset, LeaderboardArchived]
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Consolidate pending rows into a new version",
      description: "Makes the next immutable version from the rows pending now: the previous version's rows and " +
        "the pending ones, less duplicates when `dedupe` is on (same input and reference as a row in the dataset " +
        "or earlier in the batch), keeping only the newest `max_samples_to_gather` when `auto_limit_size` is on. " +
        "One consolidation runs at a time per leaderboard; consolidate_every_events and consolidate_every_hours " +
        "trigger the same in the background."
    })),
    HttpApiEndpoint.post("autoLabels", "/v1/leaderboard/:leaderboard_id/dataset/auto-labels", {
      params,
      success: Schema.Struct({ job: LabelJob }),
      error: [NotFound, NotPushDataset, LeaderboardArchived, NoLabeller]
    }).annotateMerge(requiresScope("leaderboards:write")).annotateMerge(OpenApi.annotations({
      summary: "Label the rows that have no reference",
      description: "Starts a durable job (or answers the one running) that asks the labeller — the leaderboard's " +
        "judge model (judge_provider router or hub, through the workspace's integration), else its serving " +
        "candidate of any platform (a Service candidate through its model's deployed version); 409 no_labeller without either — for a reference for every row of the latest version that has " +
        "none, with the same prompt a candidate gets (system_prompt, model_prompt). Given references are never " +
        "replaced. At most 4 calls at once; a call that times out or gets 429/5xx is retried with backoff (4 " +
        "attempts); the job survives restarts and resumes where it stopped. When it ends, the labels are published " +
        "as a new version (trigger auto_labels): those rows carry expected, label_source \"auto\" and label_model. " +
        "Progress is in GET …/dataset/status under `labelling`. 404 before the first version."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Push Dataset Management",
    description: "Push tokens, consolidation of pending rows into versions and auto-labelling: API tokens and sessions " +
      "only."
  }))
{}
