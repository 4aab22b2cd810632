import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  BaseModel,
  creationModes,
  Deployment,
  DeploymentActor,
  DeploymentEntryId,
  DeploymentEntryKind,
  DeploymentStatus,
  FineTuneEvent,
  FineTuneStatus,
  FineTuneTrigger,
  Gate,
  GatePolicy,
  GatePolicyPatch,
  ModelId,
  RemoteJobRef,
  ScheduleType,
  SelectionAlgorithm,
  Trainer,
  TrainingDataset
} from "@podium/domain/models"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { FineTuneRunId, ModelVersionId, WorkspaceId } from "@podium/domain/shared"
import { Forbidden, NotFound, UpstreamError } from "../api/Errors.ts"
import {
  BaseModelUnavailable,
  FineTuneInProgress,
  LeaderboardDatasetMinRowsRequired,
  LeaderboardRunningAssignmentBlocked,
  NoSuccessfulFineTune,
  NoTrainingData
} from "./ModelsErrors.ts"
import { CursorPage, cursorQuery, IsoTimestamp, Label, Uuid } from "../api/Schemas.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"
import { LeaderboardView, PageQuery } from "../leaderboards/LeaderboardsApi.ts"

const OpenRecord = Schema.Record(Schema.String, Schema.Json)

/** The domain's DatasetSize, with `held_out` finite on the wire (no "NaN" or "Infinity" strings). */
const DatasetSizeView = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["LIMIT", "ALL"])),
  limit: Schema.optionalKey(Schema.Struct({
    auto: Schema.optionalKey(Schema.Boolean),
    rows: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 }))),
    algorithm: Schema.optionalKey(SelectionAlgorithm)
  })),
  held_out: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 0.5 })))
}).annotate({
  identifier: "DatasetSize",
  description: "Which consolidated rows of the assigned leaderboards a fine-tune learns from. `mode` `LIMIT` " +
    "(default) takes `limit.rows` rows (every row, up to 50,000, when `limit.auto` is true, the default), `ALL` every " +
    "row; `limit.algorithm` `LAST_N` (default) takes the newest rows, `WEIGHTED_SHUFFLE` a seeded sample weighted " +
    "toward newer rows. `held_out` (0–0.5, default 0.1) is the share kept out of training to measure the version on."
})

const FineTuneScheduleView = Schema.Struct({
  run: Schema.Struct({ type: ScheduleType }),
  dataset: Schema.optionalKey(DatasetSizeView)
}).annotate({
  identifier: "FineTuneSchedule",
  description: "Fine-tune the model every day, week or calendar month (UTC), counted from when the schedule is set, " +
    "on the rows `dataset` selects. With `auto_update_model` the new version is deployed only if, on the same " +
    "held-out rows, it is non-inferior to the deployed one and not significantly worse (the model's `gate_policy`; " +
    "the run's `gate`)."
})

const FineTuneOptionsView = Schema.Struct({
  dataset_size: DatasetSizeView,
  create_synthetic_data: Schema.Boolean,
  hypertuning_enabled: Schema.Boolean
}).annotate({ identifier: "FineTuneOptions", description: "What the run was asked to do" })

const BaseModelView = BaseModel.annotate({
  identifier: "BaseModel",
  description: "A model fine-tunes start from. `trainer` `openai`: a fine-tuning job of the OpenAI-compatible " +
    "fine-tuning API (`provider` `fine_tuning_api`); `few_shot`: a prompt program of demonstrations chosen on a " +
    "validation split, in front of the router's model (`provider` `router`; no weights change). Ids are stable."
})

// ---- requests

const ModelName = Schema.NullOr(Schema.String.check(Schema.isMaxLength(300)))
const Description = Schema.NullOr(Schema.String.check(Schema.isMaxLength(4000)))
const LeaderboardIds = Schema.Array(LeaderboardId).check(Schema.isMaxLength(100))
const CreationMode = Schema.Literals(creationModes)
const BaseModelChoice = Schema.NullOr(Uuid)
const Schedule = Schema.NullOr(FineTuneScheduleView)

/** A camelCase alias: the same type as its field, documented as such. */
const alias = <S extends Schema.Top>(field: string, schema: S) =>
  Schema.optionalKey(schema.annotate({ description: `Alias of \`${field}\`: give one spelling (both, differing: 400)` }))

/**
 * The model's settable fields, each also under its camelCase alias (the spec accepts both). The
 * handler reads an alias as its field (`unalias`); both spellings with different values are a 400.
 */
const ModelFields = {
  model_name: Schema.optionalKey(ModelName.annotate({ description: "The name clients call it by, when it differs from `name`" })),
  modelName: alias("model_name", ModelName),
  description: Schema.optionalKey(Description),
  leaderboard_ids: Schema.optionalKey(LeaderboardIds.annotate({
    description: "The leaderboards it learns from, in order. Each must be the caller's, not running, and have a PUSH " +
      "dataset with at least 100 consolidated rows or a hub dataset with at least 100 rows"
  })),
  leaderboardIds: alias("leaderboard_ids", LeaderboardIds),
  creation_mode: Schema.optionalKey(CreationMode.annotate({ description: "Default `fine_tune`" })),
  creationMode: alias("creation_mode", CreationMode),
  selected_base_model_version_id: Schema.optionalKey(BaseModelChoice.annotate({
    description: "The base model fine-tunes start from: an id of `GET /api/base-models`"
  })),
  selectedBaseModelVersionId: alias("selected_base_model_version_id", BaseModelChoice),
  selected_base_model_resolution_id: Schema.optionalKey(BaseModelChoice),
  selectedBaseModelResolutionId: alias("selected_base_model_resolution_id", BaseModelChoice),
  auto_update_model: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Scheduled and continuous fine-tunes deploy their version when, on the same held-out rows, it is " +
      "non-inferior to the deployed one and not significantly worse (`gate_policy`). Default false"
  })),
  autoUpdateModel: alias("auto_update_model", Schema.Boolean),
  continuous_self_learning: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Fine-tune again whenever an assigned PUSH leaderboard has a newer consolidated version. Only after " +
      "the model's first successful fine-tune (409 `no_successful_fine_tune` before). Default false"
  })),
  continuousSelfLearning: alias("continuous_self_learning", Schema.Boolean),
  hypertuning_parameters: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Fine-tunes choose their hyperparameters (or try more prompt programs) by the data's size. Default false"
  })),
  hypertuningParameters: alias("hypertuning_parameters", Schema.Boolean),
  fine_tune_schedule: Schema.optionalKey(Schedule.annotate({ description: "null: no scheduled fine-tunes (the default)" })),
  fineTuneSchedule: alias("fine_tune_schedule", Schedule)
}

/** The camelCase aliases of the model's fields. */
export type ModelAlias =
  | "modelName"
  | "leaderboardIds"
  | "creationMode"
  | "selectedBaseModelVersionId"
  | "selectedBaseModelResolutionId"
  | "autoUpdateModel"
  | "continuousSelfLearning"
  | "hypertuningParameters"
  | "fineTuneSchedule"

/** Closed: properties it does not name are ignored. */
export const CreateModelRequest = Schema.Struct({
  name: Label(200),
  business_id: Schema.optionalKey(WorkspaceId),
  ...ModelFields
})

/** Open: every field optional; properties it does not name are kept on the model and returned. */
export const UpdateModelRequest = Schema.StructWithRest(
  Schema.Struct({
    name: Schema.optionalKey(Label(200)),
    ...ModelFields,
    gate_policy: Schema.optionalKey(GatePolicyPatch.annotate({
      description: "Changes the fields given of the gate policy in effect: alpha in (0, 1), margin in [0, 1), " +
        "min_rows ≥ 1 (whole); out of range is a 400"
    }))
  }),
  [OpenRecord]
)

/** Open and optional: properties it does not name are accepted and ignored. */
export const StartFineTuneRequest = Schema.StructWithRest(
  Schema.Struct({
    dataset_size: Schema.optionalKey(DatasetSizeView),
    create_synthetic_data: Schema.optionalKey(Schema.Boolean.annotate({
      description: "Rows without a reference get one written by their leaderboard's judge model (at most 200 per " +
        "run). Default false"
    })),
    hypertuning_enabled: Schema.optionalKey(Schema.Boolean.annotate({ description: "Default: the model's `hypertuning_parameters`" }))
  }),
  [OpenRecord]
)

export const SyncFineTuneRequest = Schema.Struct({
  run_id: Schema.optionalKey(FineTuneRunId.annotate({ description: "The run to ask about; default the model's newest" }))
})

// ---- responses

/**
 * The model. `business_id` is its workspace. An open object: properties a client added through
 * PATCH come back as sent.
 */
export const ModelView = Schema.StructWithRest(Schema.Struct({
  id: ModelId,
  business_id: WorkspaceId,
  name: Schema.String,
  model_name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  creation_mode: Schema.String,
  selected_base_model_version_id: Schema.NullOr(Schema.String),
  selected_base_model_resolution_id: Schema.NullOr(Schema.String),
  auto_update_model: Schema.Boolean,
  continuous_self_learning: Schema.Boolean,
  hypertuning_parameters: Schema.Boolean,
  gate_policy: GatePolicy.annotate({
    identifier: "GatePolicy",
    description: "When `auto_update_model`'s gate deploys a new version: the policy in effect (the defaults, " +
      "alpha 0.05, margin 0.02, min_rows 20, unless set). The new version deploys when, on at least `min_rows` " +
      "shared held-out rows, the lower end of the 95% interval of its score minus the deployed one's is above " +
      "`-margin` and it is not significantly worse (exact McNemar, `alpha`). The interval is wide on few rows: " +
      "on 20 rows it reaches -0.09 to -0.17 even when the two versions never disagree, so with margin 0.02 an " +
      "equally good version keeps the deployed one (identical versions need 97 to 189 shared rows, at most 200 " +
      "held-out rows are measured); margin 0.2 lets it through on 20 rows"
  }),
  leaderboard_ids: Schema.Array(Schema.String),
  fine_tune_schedule: Schedule,
  next_fine_tune_at: Schema.NullOr(IsoTimestamp).annotate({ description: "When the schedule fine-tunes it next" }),
  fine_tuned: Schema.Boolean.annotate({ description: "Whether a fine-tune of it has ever succeeded" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}), [OpenRecord]).annotate({ identifier: "Model" })

/** A fine-tune run; what training made (the tuned model or the demonstrations) is never shown. */
export const FineTuneRunView = Schema.Struct({
  id: Schema.String,
  model_id: Schema.String,
  status: FineTuneStatus,
  trigger: FineTuneTrigger,
  trainer: Trainer,
  base_model: BaseModelView,
  options: FineTuneOptionsView,
  dataset: Schema.NullOr(TrainingDataset.annotate({
    identifier: "FineTuneDataset",
    description: "The rows it trained and is measured on, fixed once it starts running (`seed` reproduces the choice)"
  })),
  remote: Schema.NullOr(RemoteJobRef.annotate({
    identifier: "FineTuneRemoteJob",
    description: "The fine-tuning job of an `openai` run (ids and status only)"
  })),
  metrics: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "Training metrics, and `held_out`: the base model's and the version's score on the held-out rows"
  }),
  events: Schema.Array(FineTuneEvent.annotate({ identifier: "FineTuneEvent" })).annotate({
    description: "Oldest first, the newest 200"
  }),
  version_id: Schema.NullOr(Schema.String).annotate({ description: "The version it created, once it succeeded" }),
  gate: Schema.NullOr(Gate.annotate({
    identifier: "FineTuneGate",
    description: "`auto_update_model`'s decision on a scheduled or continuous run: deploy the new version, or keep " +
      "the deployed one, and why. With a version deployed, both answer the same held-out rows: `shared_rows` both " +
      "have a verdict on, `wins` (new right, deployed wrong), `losses` (the reverse), `p_value` (two-sided exact " +
      "McNemar), `difference` (new minus deployed with its 95% Newcombe interval) and the `policy` applied; gates " +
      "recorded before these were kept have only the scores"
  })),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
}).annotate({ identifier: "FineTuneRun" })

/** An immutable version; what it is made of (the tuned model or the demonstrations) is never shown. */
export const VersionView = Schema.Struct({
  id: Schema.String,
  version_id: Schema.String.annotate({ description: "The same as `id`" }),
  model_id: Schema.String,
  fine_tune_run_id: Schema.String,
  trainer: Trainer,
  base_model: BaseModelView,
  metrics: Schema.Record(Schema.String, Schema.Unknown),
  deployment_status: DeploymentStatus,
  deployment: Schema.NullOr(Deployment.annotate({
    identifier: "Deployment",
    description: "The settings of its latest deployment: `max_workers` calls at once per instance, " +
      "`default_max_new_tokens` for calls that set no `max_tokens`, `active_workers` and `idle_timeout` as given"
  })),
  deployment_error: Schema.NullOr(Schema.String).annotate({ description: "Why its latest deployment failed" }),
  deployed_at: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp,
  completed_at: IsoTimestamp,
  inference_url: Schema.NullOr(Schema.String).annotate({
    description: "Exact-version inference (`POST`), while the version's deployment is active; null otherwise"
  })
}).annotate({ identifier: "ModelVersion" })

const params = { model_id: ModelId }
const read = "models:read" as const
const write = "models:write" as const
const fineTune = "models:fine-tune" as const
const assignmentErrors = [NotFound, LeaderboardDatasetMinRowsRequired, LeaderboardRunningAssignmentBlocked, NoSuccessfulFineTune, UpstreamError]

const assignmentRule = "Each leaderboard in `leaderboard_ids` must be one the caller can see (404 `not_found` otherwise) " +
  "and not running (409 `leaderboard_running_assignment_blocked`), with a PUSH dataset of at least 100 consolidated " +
  "rows or a hub dataset of at least 100 rows (409 `leaderboard_dataset_min_rows_required`); `details.leaderboard_id` " +
  "names it. A hub that cannot be reached to count rows is 502 `upstream_error`. " +
  "`selected_base_model_version_id` must be an id of `GET /api/base-models` (400). " +
  "`continuous_self_learning: true` before the model's first successful fine-tune is 409 `no_successful_fine_tune`."
const aliasRule = "Fields may also be given by their camelCase aliases (`modelName`, `leaderboardIds`, `creationMode`, " +
  "`selectedBaseModelVersionId`, `selectedBaseModelResolutionId`, `autoUpdateModel`, `continuousSelfLearning`, " +
  "`hypertuningParameters`, `fineTuneSchedule`); a field given both ways with different values is 400 `validation_failed`."

/** One change of what a model serves. */
export const DeploymentHistoryEntryView = Schema.Struct({
  id: DeploymentEntryId,
  model_id: ModelId,
  at: IsoTimestamp,
  kind: DeploymentEntryKind,
  from_version_id: Schema.NullOr(ModelVersionId),
  to_version_id: Schema.NullOr(ModelVersionId),
  actor: DeploymentActor,
  evidence: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DeploymentHistoryEntry" })

export class ModelsApi extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("list", "/api/models", {
      query: { ...PageQuery, business_id: Schema.optionalKey(WorkspaceId) },
      success: Schema.Struct({ models: Schema.Array(ModelView), next_offset: Schema.NullOr(Schema.Int) }),
      error: Forbidden
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "List models, oldest first",
      description: "The models of the workspace (`business_id`, default the caller's). Deleted models are not listed."
    })),
    HttpApiEndpoint.post("create", "/api/models", {
      payload: CreateModelRequest,
      success: Schema.Struct({ model: ModelView }).pipe(HttpApiSchema.status(201)),
      error: [Forbidden, ...assignmentErrors]
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Create a model",
      description: "A model learns from the leaderboards assigned to it. `name` is required; " + aliasRule + " " +
        assignmentRule + " Unknown properties are ignored."
    })),
    HttpApiEndpoint.get("get", "/api/models/:model_id", {
      params,
      success: Schema.Struct({ model: ModelView }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "A model"),
    HttpApiEndpoint.patch("update", "/api/models/:model_id", {
      params,
      payload: UpdateModelRequest,
      success: Schema.Struct({ model: ModelView }),
      error: assignmentErrors
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Change a model",
      description: "Partial: only the fields given change; null clears a nullable field (`fine_tune_schedule: null` " +
        "stops scheduled fine-tunes). `leaderboard_ids` replaces the assignment, and only leaderboards newly " +
        "assigned are checked. A changed `fine_tune_schedule` counts from now. " + aliasRule + " " + assignmentRule +
        " Unknown properties are kept and returned on the model (one named like a field of the model is ignored); " +
        "a later PATCH adds to them or replaces them by name."
    })),
    HttpApiEndpoint.delete("remove", "/api/models/:model_id", {
      params,
      success: Schema.Struct({ id: ModelId, deleted: Schema.Literal(true) }),
      error: NotFound
    }).annotateMerge(requiresScope(write)).annotateMerge(OpenApi.annotations({
      summary: "Delete a model",
      description: "Then 404 everywhere. A fine-tune it has under way is cancelled."
    })),
    HttpApiEndpoint.get("leaderboards", "/api/models/:model_id/leaderboards", {
      params,
      success: Schema.Struct({ leaderboards: Schema.Array(LeaderboardView) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "The model's assigned leaderboards",
      description: "In the order of `leaderboard_ids`; a leaderboard deleted since is left out."
    })),
    HttpApiEndpoint.get("baseModels", "/api/base-models", {
      query: { business_id: Schema.optionalKey(WorkspaceId) },
      success: Schema.Struct({ base_models: Schema.Array(BaseModelView) }),
      error: [Forbidden, UpstreamError]
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "The base models fine-tunes can start from",
      description: "The configured models of the fine-tuning API (`trainer` `openai`), and the router catalogue's " +
        "models when the workspace has a router integration (`trainer` `few_shot`). Choose one with the model's " +
        "`selected_base_model_version_id`. 502 `upstream_error` when the router cannot be reached."
    })),
    HttpApiEndpoint.get("fineTuneRuns", "/api/models/:model_id/fine-tune/runs", {
      params,
      query: PageQuery,
      success: Schema.Struct({ runs: Schema.Array(FineTuneRunView), next_offset: Schema.NullOr(Schema.Int) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "The model's fine-tune runs, newest first"),
    HttpApiEndpoint.get("fineTuneRun", "/api/models/:model_id/fine-tune/runs/:run_id", {
      params: { ...params, run_id: FineTuneRunId },
      success: Schema.Struct({ run: FineTuneRunView }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "One fine-tune run of the model",
      description: "The run as `GET …/fine-tune/runs` lists it, as stored now (`POST …/fine-tune/sync` asks the " +
        "fine-tuning API first). 404 `not_found` when the model has no run of that id (a run of another model, or " +
        "of another workspace's, included)."
    })),
    HttpApiEndpoint.post("startFineTune", "/api/models/:model_id/fine-tune/run", {
      params,
      // body optional: none at all is null (the platform decodes an empty body as null only when null is a payload)
      payload: [StartFineTuneRequest, Schema.Null],
      success: Schema.Struct({ run: FineTuneRunView }).pipe(HttpApiSchema.status(202)),
      error: [NotFound, NoTrainingData, BaseModelUnavailable, FineTuneInProgress, UpstreamError]
    }).annotateMerge(requiresScope(fineTune)).annotateMerge(OpenApi.annotations({
      summary: "Fine-tune the model",
      description: "In the background: 202 with the queued run. It learns from the consolidated rows (with a " +
        "reference) of the assigned leaderboards that `dataset_size` selects, measures the base model and the new " +
        "version on the held-out rows, and on success creates an immutable version (`GET …/versions`); a manual " +
        "run does not deploy it. One run at a time per model (409 `fine_tune_in_progress`, `details.run_id`); " +
        "409 `no_training_data` without an assigned leaderboard; 409 `base_model_unavailable` when " +
        "`selected_base_model_version_id` is unset or no longer offered. Body optional."
    })),
    HttpApiEndpoint.post("syncFineTune", "/api/models/:model_id/fine-tune/sync", {
      params,
      payload: [SyncFineTuneRequest, Schema.Null],
      success: Schema.Struct({ run: FineTuneRunView }),
      error: NotFound
    }).annotateMerge(requiresScope(fineTune)).annotateMerge(OpenApi.annotations({
      summary: "Bring a fine-tune run up to date",
      description: "Asks the fine-tuning API now how the run's job is doing (status, events, training metrics) " +
        "instead of waiting for the next poll, and answers the run. `run_id` defaults to the model's newest run; " +
        "404 when the model has no such run. A failure of the fine-tuning API does not fail this request. Body optional."
    })),
    HttpApiEndpoint.get("deploymentHistory", "/api/models/:model_id/deployment-history", {
      params,
      query: cursorQuery(DeploymentEntryId),
      success: CursorPage(DeploymentHistoryEntryView, DeploymentEntryId),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "The model's deployment history, newest first",
      description: "Every change of what the model serves: `deploy` and `rollback` (a client deployed a version; " +
        "rollback when it was created before the version active then), `stop` (a client stopped the active " +
        "version) and `gate` (an automatic fine-tune's gate decided to deploy its version or keep the deployed " +
        "one; its `evidence` is the run's recorded gate). `from_version_id` is the version active before (or the " +
        "one stopped), `to_version_id` the version deployed (null for a stop, or a gate that kept the deployed " +
        "one); `actor` is who: `user` or `api_token` with its id, or `system` with the gate's `fine_tune_run_id`. " +
        "A deploy is recorded when asked, before its check makes it active. Entries are never changed or " +
        "removed. `limit` 1–100 (default 20); `cursor` is the previous page's `next_cursor`."
    })),
    HttpApiEndpoint.get("versions", "/api/models/:model_id/versions", {
      params,
      success: Schema.Struct({ versions: Schema.Array(VersionView) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "The model's versions, newest first",
      description: "One per successful fine-tune, immutable. `inference_url` is its exact-version inference address " +
        "while its deployment is active. What a version is made of (the tuned model's name, its demonstrations) is " +
        "never shown."
    })),
    HttpApiEndpoint.get("version", "/api/models/:model_id/versions/:version_id", {
      params: { ...params, version_id: ModelVersionId },
      success: Schema.Struct({ version: VersionView }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "One version of the model",
      description: "The immutable version as `GET …/versions` lists it, with its deployment as it is now. 404 " +
        "`not_found` when the model has no version of that id (another model's version included)."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Models and Fine-Tuning",
    description: "Models that learn from their assigned leaderboards: fine-tune runs, the gate's decisions, immutable " +
      "versions and the deployment history."
  }))
{}
