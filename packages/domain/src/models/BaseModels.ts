import { Context, Effect, Layer, Option } from "effect"
import { type IntegrationUnavailable, IntegrationRepository } from "../integrations/index.ts"
import { RouterCatalogue } from "../runs/index.ts"
import { SecretCipher, type WorkspaceId } from "../shared/index.ts"
import { type BaseModel, baseModelId } from "./BaseModel.ts"
import { FineTuningApi } from "./FineTuningApi.ts"

/** The models FINE_TUNE_BASE_MODELS names, fine-tuned by the `openai` trainer at FINE_TUNE_BASE_URL. */
export const FineTuneBaseModels = Context.Reference<ReadonlyArray<string>>("@podium/domain/models/FineTuneBaseModels", {
  defaultValue: () => []
})

/**
 * What fine-tunes can start from: the configured models of the fine-tuning API (`openai` trainer,
 * when FINE_TUNE_BASE_URL is set) and the router catalogue's models (`few_shot` trainer, for a
 * workspace with a router integration). Ids are stable, derived from trainer and model name.
 */
export class BaseModels extends Context.Service<BaseModels, {
  readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<BaseModel>, IntegrationUnavailable>
  /** Configured models are found without asking the router. */
  readonly find: (workspaceId: WorkspaceId, id: string) => Effect.Effect<Option.Option<BaseModel>, IntegrationUnavailable>
}>()("@podium/domain/models/BaseModels") {
  static readonly layer = Layer.effect(
    BaseModels,
    Effect.gen(function*() {
      const api = yield* FineTuningApi
      const catalogue = yield* RouterCatalogue
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher

      const names = yield* FineTuneBaseModels
      const configured = Effect.succeed<ReadonlyArray<BaseModel>>(
        api.configured
          ? names.map((model_name) => ({
            id: baseModelId("openai", model_name),
            name: model_name,
            trainer: "openai",
            provider: "fine_tuning_api",
            model_name
          }))
          : []
      )

      const routed = Effect.fnUntraced(function*(workspaceId: WorkspaceId) {
        const integration = yield* integrations.find(workspaceId, "router")
        if (Option.isNone(integration)) return []
        const models = yield* catalogue.models(yield* cipher.open(integration.value.sealed_token))
        return models.map((m): BaseModel => ({
          id: baseModelId("few_shot", m.id),
          name: m.name ?? m.id,
          trainer: "few_shot",
          provider: "router",
          model_name: m.id
        }))
      })

      const list = Effect.fn("BaseModels.list")(function*(workspaceId: WorkspaceId) {
        return [...yield* configured, ...yield* routed(workspaceId)]
      })

      const find = Effect.fn("BaseModels.find")(function*(workspaceId: WorkspaceId, id: string) {
        const own = (yield* configured).find((m) => m.id === id)
        if (own !== undefined) return Option.some(own)
        return Option.fromUndefinedOr((yield* routed(workspaceId)).find((m) => m.id === id))
      })

      return BaseModels.of({ list, find })
    })
  )
}
