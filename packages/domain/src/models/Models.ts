import { Context, DateTime, Effect, Layer, Option } from "effect"
import { type Forbidden, type Principal, visibleMembership, workspaceOf } from "../access/index.ts"
import { DatasetRepository } from "../datasets/index.ts"
import {
  HubDatasets,
  type IntegrationUnavailable,
  IntegrationRepository,
  parseHubDatasetUrl
} from "../integrations/index.ts"
import { type Leaderboard, type LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import { IdGenerator, InvalidInput, NotFound, SecretCipher, type WorkspaceId } from "../shared/index.ts"
import { assignable, type DatasetFacts } from "./Assignment.ts"
import type { BaseModel } from "./BaseModel.ts"
import { BaseModels } from "./BaseModels.ts"
import { isActive } from "./FineTuneRun.ts"
import { applyGatePolicyPatch } from "./GatePolicy.ts"
import {
  type CreateModelInput,
  creationModes,
  gatePolicyOf,
  mergeExtra,
  Model,
  ModelId,
  newModel,
  nextFineTune,
  type UpdateModelInput
} from "./Model.ts"
import { type AssignmentRejected, NoSuccessfulFineTune } from "./ModelErrors.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { ModelRepository } from "./ModelRepository.ts"

type Page = { readonly limit: number; readonly offset: number }

/** Models of the caller's workspace; another workspace's do not exist for them. */
export class Models extends Context.Service<Models, {
  readonly list: (principal: Principal, page: Page & { readonly business_id?: WorkspaceId | undefined }) => Effect.Effect<
    ReadonlyArray<Model>,
    Forbidden
  >
  readonly create: (
    principal: Principal,
    input: CreateModelInput & { readonly business_id?: WorkspaceId | undefined }
  ) => Effect.Effect<Model, Forbidden | InvalidInput | NotFound | AssignmentRejected | NoSuccessfulFineTune | IntegrationUnavailable>
  readonly get: (principal: Principal, id: ModelId) => Effect.Effect<Model, NotFound>
  readonly update: (
    principal: Principal,
    id: ModelId,
    input: UpdateModelInput
  ) => Effect.Effect<Model, InvalidInput | NotFound | AssignmentRejected | NoSuccessfulFineTune | IntegrationUnavailable>
  /** Soft delete; a fine-tune it has under way is cancelled. */
  readonly remove: (principal: Principal, id: ModelId) => Effect.Effect<void, NotFound>
  /** The leaderboards assigned to it, in the order given. */
  readonly leaderboards: (principal: Principal, id: ModelId) => Effect.Effect<ReadonlyArray<Leaderboard>, NotFound>
  readonly baseModels: (
    principal: Principal,
    businessId: WorkspaceId | undefined
  ) => Effect.Effect<ReadonlyArray<BaseModel>, Forbidden | IntegrationUnavailable>
  /** The model, when the caller can see it. */
  readonly visible: (principal: Principal, id: ModelId) => Effect.Effect<Model, NotFound>
}>()("@podium/domain/models/Models") {
  static readonly layer = Layer.effect(
    Models,
    Effect.gen(function*() {
      const models = yield* ModelRepository
      const fineTunes = yield* FineTuneRepository
      const leaderboards = yield* Leaderboards
      const datasets = yield* DatasetRepository
      const hub = yield* HubDatasets
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher
      const bases = yield* BaseModels
      const ids = yield* IdGenerator

      const visible = Effect.fn("Models.visible")(function*(principal: Principal, id: ModelId) {
        const found = yield* models.find(id)
        const sees = Option.isSome(found) && (
          principal._tag === "ApiTokenPrincipal"
            ? principal.token.workspace_id === found.value.workspace_id
            : principal._tag === "PushTokenPrincipal"
            ? false
            : visibleMembership(principal, found.value.workspace_id) !== undefined
        )
        if (!sees || Option.isNone(found)) return yield* new NotFound({ resource: "model", id })
        return found.value
      })

      const hubRows = Effect.fnUntraced(function*(leaderboard: Leaderboard) {
        const url = leaderboard.challenge.dataset_url
        const id = url === null ? undefined : parseHubDatasetUrl(url)
        if (id === undefined || id._tag === "Failure") return null
        const integration = yield* integrations.find(leaderboard.workspace_id, "hub")
        const token = Option.isSome(integration) ? Option.some(yield* cipher.open(integration.value.sealed_token)) : Option.none()
        return yield* hub.describe(id.success, token).pipe(
          Effect.map((info) => info.rows),
          Effect.catchTag("HubDatasetNotFound", () => Effect.succeed(null))
        )
      })

      /** Each leaderboard newly assigned must be of the model's workspace and have data to learn from. */
      const checkAssignable = Effect.fnUntraced(function*(principal: Principal, workspaceId: WorkspaceId, leaderboardIds: ReadonlyArray<LeaderboardId>) {
        for (const id of leaderboardIds) {
          const { leaderboard } = yield* leaderboards.get(principal, id)
          // a member of several workspaces sees their leaderboards too: a model learns from its own workspace's only
          if (leaderboard.workspace_id !== workspaceId) return yield* new NotFound({ resource: "leaderboard", id })
          const facts: DatasetFacts = leaderboard.challenge.dataset_type === "PUSH"
            ? { consolidatedRows: (yield* datasets.versions(leaderboard.id))[0]?.row_count ?? 0, hubRows: null }
            : { consolidatedRows: 0, hubRows: yield* hubRows(leaderboard) }
          yield* Effect.fromResult(assignable(leaderboard, facts))
        }
      })

      const unique = <A>(values: ReadonlyArray<A>) => [...new Set(values)]

      const checkFields = Effect.fnUntraced(function*(workspaceId: WorkspaceId, input: UpdateModelInput) {
        if (input.name !== undefined && input.name.trim() === "") {
          return yield* new InvalidInput({ message: "name must not be empty", path: ["name"] })
        }
        if (input.creation_mode !== undefined && !(creationModes as ReadonlyArray<string>).includes(input.creation_mode)) {
          return yield* new InvalidInput({ message: `creation_mode is one of ${creationModes.join(", ")}`, path: ["creation_mode"] })
        }
        const base = input.selected_base_model_version_id
        if (base !== undefined && base !== null && Option.isNone(yield* bases.find(workspaceId, base))) {
          return yield* new InvalidInput({
            message: "selected_base_model_version_id is not a base model this workspace can use: see GET /api/base-models",
            path: ["selected_base_model_version_id"]
          })
        }
      })

      const list = Effect.fn("Models.list")(function*(principal: Principal, page: Page & { readonly business_id?: WorkspaceId | undefined }) {
        return yield* models.list(yield* workspaceOf(principal, page.business_id), page)
      })

      const create = Effect.fn("Models.create")(function*(
        principal: Principal,
        input: CreateModelInput & { readonly business_id?: WorkspaceId | undefined }
      ) {
        const workspaceId = yield* workspaceOf(principal, input.business_id)
        yield* checkFields(workspaceId, input)
        const id = yield* ids.make(ModelId)
        if (input.continuous_self_learning === true) {
          return yield* new NoSuccessfulFineTune({
            model_id: id,
            message: "Continuous self-learning starts after the model's first successful fine-tune"
          })
        }
        const leaderboardIds = unique(input.leaderboard_ids ?? [])
        yield* checkAssignable(principal, workspaceId, leaderboardIds)
        const now = yield* DateTime.now
        const schedule = input.fine_tune_schedule ?? null
        const model = newModel({
          id,
          workspace_id: workspaceId,
          name: input.name.trim(),
          model_name: input.model_name ?? null,
          description: input.description ?? null,
          creation_mode: input.creation_mode ?? "fine_tune",
          selected_base_model_version_id: input.selected_base_model_version_id ?? null,
          selected_base_model_resolution_id: input.selected_base_model_resolution_id ?? null,
          auto_update_model: input.auto_update_model ?? false,
          hypertuning_parameters: input.hypertuning_parameters ?? false,
          leaderboard_ids: leaderboardIds,
          fine_tune_schedule: schedule,
          next_fine_tune_at: schedule === null ? null : nextFineTune(schedule.run.type, now),
          extra: mergeExtra({}, input.extra),
          created_at: now
        })
        yield* models.insert(model)
        return model
      })

      const get = Effect.fn("Models.get")(function*(principal: Principal, id: ModelId) {
        return yield* visible(principal, id)
      })

      const update = Effect.fn("Models.update")(function*(principal: Principal, id: ModelId, input: UpdateModelInput) {
        const model = yield* visible(principal, id)
        yield* checkFields(model.workspace_id, input)
        if (input.continuous_self_learning === true && !model.fine_tuned) {
          return yield* new NoSuccessfulFineTune({
            model_id: model.id,
            message: "Continuous self-learning can be turned on after the model's first successful fine-tune"
          })
        }
        const leaderboardIds = input.leaderboard_ids === undefined ? model.leaderboard_ids : unique(input.leaderboard_ids)
        yield* checkAssignable(principal, model.workspace_id, leaderboardIds.filter((l) => !model.leaderboard_ids.includes(l)))
        const gatePolicy = input.gate_policy === undefined
          ? model.gate_policy
          : yield* Effect.fromResult(applyGatePolicyPatch(gatePolicyOf(model), input.gate_policy, ["gate_policy"]))
        const now = yield* DateTime.now
        const schedule = input.fine_tune_schedule === undefined ? model.fine_tune_schedule : input.fine_tune_schedule
        const scheduleChanged = JSON.stringify(schedule) !== JSON.stringify(model.fine_tune_schedule)
        const next = new Model({
          ...model,
          name: input.name?.trim() ?? model.name,
          model_name: input.model_name === undefined ? model.model_name : input.model_name,
          description: input.description === undefined ? model.description : input.description,
          creation_mode: input.creation_mode ?? model.creation_mode,
          selected_base_model_version_id: input.selected_base_model_version_id === undefined
            ? model.selected_base_model_version_id
            : input.selected_base_model_version_id,
          selected_base_model_resolution_id: input.selected_base_model_resolution_id === undefined
            ? model.selected_base_model_resolution_id
            : input.selected_base_model_resolution_id,
          auto_update_model: input.auto_update_model ?? model.auto_update_model,
          continuous_self_learning: input.continuous_self_learning ?? model.continuous_self_learning,
          hypertuning_parameters: input.hypertuning_parameters ?? model.hypertuning_parameters,
          leaderboard_ids: leaderboardIds,
          fine_tune_schedule: schedule,
          // a changed schedule counts from now; an unchanged one keeps its next occurrence
          next_fine_tune_at: schedule === null
            ? null
            : scheduleChanged || model.next_fine_tune_at === null
            ? nextFineTune(schedule.run.type, now)
            : model.next_fine_tune_at,
          gate_policy: gatePolicy,
          extra: mergeExtra(model.extra, input.extra),
          updated_at: now
        })
        if (!(yield* models.update(next))) return yield* new NotFound({ resource: "model", id })
        return next
      })

      const remove = Effect.fn("Models.remove")(function*(principal: Principal, id: ModelId) {
        const model = yield* visible(principal, id)
        const now = yield* DateTime.now
        if (!(yield* models.softDelete(model.id, now))) return yield* new NotFound({ resource: "model", id })
        const [latest] = yield* fineTunes.list(model.id, { limit: 1, offset: 0 })
        if (latest !== undefined && isActive(latest.status)) {
          yield* fineTunes.end(latest.id, { status: "cancelled", version: null, gate: null, error: "the model was deleted" }, now)
        }
      })

      const assigned = Effect.fn("Models.leaderboards")(function*(principal: Principal, id: ModelId) {
        const model = yield* visible(principal, id)
        const found: Array<Leaderboard> = []
        for (const leaderboardId of model.leaderboard_ids) {
          const detail = yield* Effect.option(leaderboards.get(principal, leaderboardId))
          if (Option.isSome(detail)) found.push(detail.value.leaderboard)
        }
        return found
      })

      const baseModels = Effect.fn("Models.baseModels")(function*(principal: Principal, businessId: WorkspaceId | undefined) {
        return yield* bases.list(yield* workspaceOf(principal, businessId))
      })

      return Models.of({ list, create, get, update, remove, leaderboards: assigned, baseModels, visible })
    })
  )
}
