import { DateTime, Result, Schema } from "effect"
import { LeaderboardId } from "../leaderboards/index.ts"
import { InvalidInput, ModelId, WorkspaceId } from "../shared/index.ts"
import { defaultGatePolicy, GatePolicy, type GatePolicyPatch } from "./GatePolicy.ts"

/** `LAST_N`: the newest rows; `WEIGHTED_SHUFFLE`: a seeded sample weighted toward newer rows. */
export const SelectionAlgorithm = Schema.Literals(["LAST_N", "WEIGHTED_SHUFFLE"])
export type SelectionAlgorithm = typeof SelectionAlgorithm.Type

/**
 * Which consolidated rows a fine-tune trains on. `mode` `LIMIT` (the spec's) takes `limit.rows` of
 * them (every row when `limit.auto`), `ALL` every row. `held_out` is the share of the chosen rows
 * kept out of training to measure the version on (0 switches it off).
 */
export const DatasetSize = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["LIMIT", "ALL"])),
  limit: Schema.optionalKey(Schema.Struct({
    auto: Schema.optionalKey(Schema.Boolean),
    rows: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 }))),
    algorithm: Schema.optionalKey(SelectionAlgorithm)
  })),
  held_out: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 0.5 })))
})
export type DatasetSize = typeof DatasetSize.Type

export const ScheduleType = Schema.Literals(["DAILY", "WEEKLY", "MONTHLY"])
export type ScheduleType = typeof ScheduleType.Type

/** `fine_tune_schedule` of a model PATCH: how often to fine-tune, and on which rows. */
export const FineTuneSchedule = Schema.Struct({
  run: Schema.Struct({ type: ScheduleType }),
  dataset: Schema.optionalKey(DatasetSize)
})
export type FineTuneSchedule = typeof FineTuneSchedule.Type

export { ModelId } from "../shared/index.ts"

export class Model extends Schema.Class<Model>("Model")({
  id: ModelId,
  workspace_id: WorkspaceId,
  name: Schema.String,
  /** The name clients call it by, when it differs from `name`. */
  model_name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  creation_mode: Schema.String,
  /** The base model fine-tunes start from (an id of `GET /api/base-models`). */
  selected_base_model_version_id: Schema.NullOr(Schema.String),
  selected_base_model_resolution_id: Schema.NullOr(Schema.String),
  auto_update_model: Schema.Boolean,
  continuous_self_learning: Schema.Boolean,
  hypertuning_parameters: Schema.Boolean,
  leaderboard_ids: Schema.Array(LeaderboardId),
  fine_tune_schedule: Schema.NullOr(FineTuneSchedule),
  next_fine_tune_at: Schema.NullOr(Schema.DateTimeUtc),
  /** `auto_update_model`'s gate policy as set; null: the defaults (`gatePolicyOf` gives the one in effect). */
  gate_policy: Schema.NullOr(GatePolicy),
  /** Whether a fine-tune of it has ever succeeded: continuous learning needs one. */
  fine_tuned: Schema.Boolean,
  /** Properties clients sent that the service does not know; kept and returned (open object). */
  extra: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * A model as it is created: no options chosen, no schedule, never fine-tuned, updated when created;
 * `fields` set what the caller chose.
 */
export const newModel = (
  fields: Pick<Model, "id" | "workspace_id" | "name" | "created_at"> & Partial<Omit<Model, "fine_tuned" | "updated_at">>
): Model =>
  new Model({
    model_name: null,
    description: null,
    creation_mode: "fine_tune",
    selected_base_model_version_id: null,
    selected_base_model_resolution_id: null,
    auto_update_model: false,
    continuous_self_learning: false,
    hypertuning_parameters: false,
    leaderboard_ids: [],
    fine_tune_schedule: null,
    next_fine_tune_at: null,
    gate_policy: null,
    extra: {},
    ...fields,
    fine_tuned: false,
    updated_at: fields.created_at
  })

/**
 * The model's own fields, as stored and as shown (`business_id` is its workspace): an extra
 * property never shadows one, so a PATCH cannot make `id` or `fine_tuned` read differently.
 */
const readOnlyFields: ReadonlySet<string> = new Set([
  ...Object.keys(Model.fields).filter((key) => key !== "extra"),
  "business_id",
  "deleted_at"
])

/** `current` with `extra`'s properties added or replaced, except those naming one of the model's fields. */
export const mergeExtra = (
  current: Readonly<Record<string, unknown>>,
  extra: Readonly<Record<string, unknown>> | undefined
): Record<string, unknown> => ({
  ...current,
  ...Object.fromEntries(Object.entries(extra ?? {}).filter(([key]) => !readOnlyFields.has(key)))
})

export const creationModes = ["fine_tune", "few_shot", "manual"] as const

/** The next scheduled fine-tune after `from`: a day, a week or a calendar month later (UTC). */
export const nextFineTune = (type: ScheduleType, from: DateTime.Utc): DateTime.Utc =>
  type === "DAILY"
    ? DateTime.add(from, { days: 1 })
    : type === "WEEKLY"
    ? DateTime.add(from, { weeks: 1 })
    : DateTime.add(from, { months: 1 })

/** The create request's fields as the spec names them; camelCase aliases are read by `createInputOf`. */
export interface CreateModelInput {
  readonly name: string
  readonly model_name?: string | null | undefined
  readonly description?: string | null | undefined
  readonly leaderboard_ids?: ReadonlyArray<LeaderboardId> | undefined
  readonly creation_mode?: string | undefined
  readonly selected_base_model_version_id?: string | null | undefined
  readonly selected_base_model_resolution_id?: string | null | undefined
  readonly auto_update_model?: boolean | undefined
  readonly continuous_self_learning?: boolean | undefined
  readonly hypertuning_parameters?: boolean | undefined
  readonly fine_tune_schedule?: FineTuneSchedule | null | undefined
  /** Every other property of an open request: stored and returned, unless it names one of the model's fields. */
  readonly extra?: Readonly<Record<string, unknown>> | undefined
}

/**
 * PATCH: every field optional; `leaderboard_ids` replaces the assignment; `gate_policy` changes the
 * fields it gives of the policy in effect.
 */
export type UpdateModelInput = Partial<Omit<CreateModelInput, "name">> & {
  readonly name?: string | undefined
  readonly gate_policy?: GatePolicyPatch | undefined
}

/** The gate policy in effect for the model: the one set, or the defaults. */
export const gatePolicyOf = (model: Pick<Model, "gate_policy">): GatePolicy => model.gate_policy ?? defaultGatePolicy

const aliases = {
  modelName: "model_name",
  leaderboardIds: "leaderboard_ids",
  creationMode: "creation_mode",
  selectedBaseModelVersionId: "selected_base_model_version_id",
  selectedBaseModelResolutionId: "selected_base_model_resolution_id",
  autoUpdateModel: "auto_update_model",
  continuousSelfLearning: "continuous_self_learning",
  hypertuningParameters: "hypertuning_parameters",
  fineTuneSchedule: "fine_tune_schedule"
} as const

/**
 * The request with camelCase aliases read as their snake_case fields. A field given both ways with
 * different values is ambiguous: invalid, rather than one silently winning.
 */
export const unalias = (body: Readonly<Record<string, unknown>>): Result.Result<Record<string, unknown>, InvalidInput> => {
  const out: Record<string, unknown> = { ...body }
  for (const [alias, field] of Object.entries(aliases)) {
    if (!(alias in body)) continue
    delete out[alias]
    if (field in body && JSON.stringify(body[field]) !== JSON.stringify(body[alias])) {
      return Result.fail(new InvalidInput({ message: `${field} and ${alias} are the same field: give one`, path: [alias] }))
    }
    out[field] = body[alias]
  }
  return Result.succeed(out)
}
