import { DateTime, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import {
  type DeploymentHistoryEntry,
  Deployments,
  FineTunes,
  type FineTuneRun,
  type Model,
  type ModelVersion,
  gatePolicyOf,
  Models,
  unalias,
  type UpdateModelInput
} from "@podium/domain/models"
import { Links } from "@podium/domain/shared"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { onePage, page } from "../handlers/Paging.ts"
import { leaderboardView } from "../leaderboards/LeaderboardsHttp.ts"
import {
  type DeploymentHistoryEntryView,
  type FineTuneRunView,
  type ModelAlias,
  type ModelView,
  UpdateModelRequest,
  type VersionView
} from "./ModelsApi.ts"

const iso = (at: DateTime.Utc) => DateTime.formatIso(at)
const isoOrNull = (at: DateTime.Utc | null) => at === null ? null : DateTime.formatIso(at)

/** Known fields win over stored unknown ones of the same name. */
const modelView = (m: Model): typeof ModelView.Type => ({
  ...m.extra as typeof ModelView.Type,
  id: m.id,
  business_id: m.workspace_id,
  name: m.name,
  model_name: m.model_name,
  description: m.description,
  creation_mode: m.creation_mode,
  selected_base_model_version_id: m.selected_base_model_version_id,
  selected_base_model_resolution_id: m.selected_base_model_resolution_id,
  auto_update_model: m.auto_update_model,
  continuous_self_learning: m.continuous_self_learning,
  hypertuning_parameters: m.hypertuning_parameters,
  gate_policy: gatePolicyOf(m),
  leaderboard_ids: m.leaderboard_ids,
  fine_tune_schedule: m.fine_tune_schedule,
  next_fine_tune_at: isoOrNull(m.next_fine_tune_at),
  fine_tuned: m.fine_tuned,
  created_at: iso(m.created_at),
  updated_at: iso(m.updated_at)
})

/** Every field but the workspace. */
const historyEntryView = (e: DeploymentHistoryEntry): typeof DeploymentHistoryEntryView.Type => ({
  id: e.id,
  model_id: e.model_id,
  at: iso(e.at),
  kind: e.kind,
  from_version_id: e.from_version_id,
  to_version_id: e.to_version_id,
  actor: e.actor,
  evidence: e.evidence,
  reason: e.reason
})

/** Every field but the artifact (what training made) and the workspace. */
const fineTuneRunView = (run: FineTuneRun): typeof FineTuneRunView.Type => ({
  id: run.id,
  model_id: run.model_id,
  status: run.status,
  trigger: run.trigger,
  trainer: run.trainer,
  base_model: run.base_model,
  options: run.options,
  dataset: run.dataset,
  remote: run.remote,
  metrics: run.metrics,
  events: run.events,
  version_id: run.version_id,
  gate: run.gate,
  error: run.error,
  created_at: iso(run.created_at),
  started_at: isoOrNull(run.started_at),
  finished_at: isoOrNull(run.finished_at)
})

/** The body with its camelCase aliases read as their fields; both spellings, differing, are invalid input. */
const unaliased = <A extends object>(body: A) =>
  Effect.map(Effect.fromResult(unalias(body as Readonly<Record<string, unknown>>)), (fields) => fields as Omit<A, ModelAlias>)

/**
 * What the open update request declares, camelCase aliases included; every other property it
 * carries is the model's extra.
 */
const updateFields: ReadonlySet<string> = new Set(Object.keys(UpdateModelRequest.schema.fields))
const updateInput = (body: object): UpdateModelInput => {
  const entries = Object.entries(body)
  return {
    ...Object.fromEntries(entries.filter(([key]) => updateFields.has(key))),
    extra: Object.fromEntries(entries.filter(([key]) => !updateFields.has(key)))
  }
}


/** The exact-version inference address exists only while the version is deployed; never its artifact. */
export const versionViewOf = (links: Links["Service"]) => (v: ModelVersion): typeof VersionView.Type => ({
  id: v.id,
  version_id: v.id,
  model_id: v.model_id,
  fine_tune_run_id: v.fine_tune_run_id,
  trainer: v.trainer,
  base_model: v.base_model,
  metrics: v.metrics,
  deployment_status: v.deployment_status,
  deployment: v.deployment,
  deployment_error: v.deployment_error,
  deployed_at: v.deployed_at === null ? null : iso(v.deployed_at),
  created_at: iso(v.created_at),
  completed_at: iso(v.completed_at),
  inference_url: v.deployment_status === "active" ? links.modelVersionInferenceUrl(v.model_id, v.id) : null
})

export const ModelsHttp = HttpApiBuilder.group(
  Api,
  "models",
  Effect.fn(function*(handlers) {
    const models = yield* Models
    const fineTunes = yield* FineTunes
    const deployments = yield* Deployments
    const links = yield* Links

    const versionView = versionViewOf(links)

    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const asked = page(query)
          const found = yield* models.list(yield* CurrentPrincipal, {
            ...asked,
            limit: asked.limit + 1,
            business_id: query.business_id
          })
          const { items, next_offset } = onePage(found, asked)
          return { models: items.map(modelView), next_offset }
        }).pipe(mapDomainErrors))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const input = yield* unaliased(payload)
          return { model: modelView(yield* models.create(yield* CurrentPrincipal, input)) }
        }).pipe(mapDomainErrors))
      .handle("get", ({ params }) =>
        Effect.gen(function*() {
          return { model: modelView(yield* models.get(yield* CurrentPrincipal, params.model_id)) }
        }).pipe(mapDomainErrors))
      .handle("update", ({ params, payload }) =>
        Effect.gen(function*() {
          const input = updateInput(yield* unaliased(payload))
          return { model: modelView(yield* models.update(yield* CurrentPrincipal, params.model_id, input)) }
        }).pipe(mapDomainErrors))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          yield* models.remove(yield* CurrentPrincipal, params.model_id)
          return { id: params.model_id, deleted: true as const }
        }).pipe(mapDomainErrors))
      .handle("leaderboards", ({ params }) =>
        Effect.gen(function*() {
          const assigned = yield* models.leaderboards(yield* CurrentPrincipal, params.model_id)
          return { leaderboards: assigned.map(leaderboardView) }
        }).pipe(mapDomainErrors))
      .handle("baseModels", ({ query }) =>
        Effect.gen(function*() {
          return { base_models: yield* models.baseModels(yield* CurrentPrincipal, query.business_id) }
        }).pipe(mapDomainErrors))
      .handle("fineTuneRuns", ({ params, query }) =>
        Effect.gen(function*() {
          const asked = page(query)
          const found = yield* fineTunes.list(yield* CurrentPrincipal, params.model_id, { ...asked, limit: asked.limit + 1 })
          const { items, next_offset } = onePage(found, asked)
          return { runs: items.map(fineTuneRunView), next_offset }
        }).pipe(mapDomainErrors))
      .handle("fineTuneRun", ({ params }) =>
        Effect.gen(function*() {
          return { run: fineTuneRunView(yield* fineTunes.run(yield* CurrentPrincipal, params.model_id, params.run_id)) }
        }).pipe(mapDomainErrors))
      .handle("startFineTune", ({ params, payload }) =>
        Effect.gen(function*() {
          const run = yield* fineTunes.start(yield* CurrentPrincipal, params.model_id, {
            dataset_size: payload?.dataset_size,
            create_synthetic_data: payload?.create_synthetic_data,
            hypertuning_enabled: payload?.hypertuning_enabled
          })
          return { run: fineTuneRunView(run) }
        }).pipe(mapDomainErrors))
      .handle("syncFineTune", ({ params, payload }) =>
        Effect.gen(function*() {
          return { run: fineTuneRunView(yield* fineTunes.sync(yield* CurrentPrincipal, params.model_id, payload?.run_id)) }
        }).pipe(mapDomainErrors))
      .handle("versions", ({ params }) =>
        Effect.gen(function*() {
          const versions = yield* fineTunes.versions(yield* CurrentPrincipal, params.model_id)
          return { versions: versions.map(versionView) }
        }).pipe(mapDomainErrors))
      .handle("version", ({ params }) =>
        Effect.gen(function*() {
          return { version: versionView(yield* fineTunes.version(yield* CurrentPrincipal, params.model_id, params.version_id)) }
        }).pipe(mapDomainErrors))
      .handle("deploymentHistory", ({ params, query }) =>
        Effect.gen(function*() {
          const found = yield* deployments.history(yield* CurrentPrincipal, params.model_id, {
            limit: query.limit ?? 20,
            cursor: query.cursor
          })
          return { data: found.entries.map(historyEntryView), next_cursor: found.next_cursor }
        }).pipe(mapDomainErrors))
  })
)
