import { type Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import {
  type HubDatasetInfo,
  HubDatasetNotFound,
  type HubSplit,
  IntegrationUnavailable,
  HubDatasets,
} from "@podium/domain/integrations"

export interface HubDatasetsHttpOptions {
  /** Hugging Face-style hub root, e.g. `https://huggingface.co`; unset means the hub is unavailable. */
  readonly hubBaseUrl?: string | undefined
  readonly timeout?: Duration.Input | undefined
}

const Split = Schema.Struct({ name: Schema.String, num_examples: Schema.optional(Schema.Number) })
const DatasetInfo = Schema.Struct({ config_name: Schema.optional(Schema.String), splits: Schema.optional(Schema.Array(Split)) })

/** The subset of `GET /api/datasets/{id}` we read; `cardData.dataset_info` is one config or a list of them. */
const HubDataset = Schema.fromJsonString(Schema.Struct({
  id: Schema.String,
  private: Schema.optional(Schema.Boolean),
  gated: Schema.optional(Schema.Union([Schema.Boolean, Schema.String])),
  cardData: Schema.optional(Schema.NullOr(Schema.Struct({
    dataset_info: Schema.optional(Schema.Union([DatasetInfo, Schema.Array(DatasetInfo)]))
  })))
}))

const splitsOf = (info: typeof HubDataset.Type): ReadonlyArray<HubSplit> => {
  const raw = info.cardData?.dataset_info
  const configs = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw as typeof DatasetInfo.Type]
  return configs.flatMap((config) =>
    (config.splits ?? []).flatMap((split: typeof Split.Type) =>
      split.num_examples === undefined ? [] : [{
        name: config.config_name !== undefined && configs.length > 1 ? `${config.config_name}/${split.name}` : split.name,
        rows: split.num_examples
      }]
    )
  )
}

const make = Effect.fnUntraced(function*(options: HubDatasetsHttpOptions) {
  const client = yield* HttpClient.HttpClient
  const unavailable = (reason: string) => new IntegrationUnavailable({ provider: "hub", reason })

  const describe = Effect.fn("HubDatasetsHttp.describe")(function*(
    id: HubDatasetInfo["id"],
    token: Option.Option<Redacted.Redacted<string>>
  ): Effect.fn.Return<HubDatasetInfo, HubDatasetNotFound | IntegrationUnavailable> {
    const base = options.hubBaseUrl?.replace(/\/+$/, "")
    if (base === undefined || base === "") return yield* unavailable("the hub is not configured")
    let request = HttpClientRequest.get(`${base}/api/datasets/${id}`).pipe(HttpClientRequest.acceptJson)
    if (Option.isSome(token)) request = HttpClientRequest.bearerToken(request, token.value)
    const { body, status } = yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (body) => ({ status: response.status, body }))),
      Effect.timeout(options.timeout ?? "10 seconds"),
      Effect.mapError((error) =>
        unavailable(error._tag === "TimeoutError" ? "the hub did not answer in time" : "could not reach the hub")
      )
    )
    // The hub answers 401 for private and missing repositories alike when it cannot show them.
    if (status === 401 || status === 403 || status === 404) return yield* new HubDatasetNotFound({ dataset_id: id })
    if (status < 200 || status >= 300) return yield* unavailable(`the hub answered ${status}`)
    const info = yield* Schema.decodeUnknownEffect(HubDataset)(body).pipe(
      Effect.mapError(() => unavailable("the hub sent an unexpected answer"))
    )
    const splits = splitsOf(info)
    return {
      id,
      private: info.private ?? false,
      gated: info.gated !== undefined && info.gated !== false,
      rows: splits.length === 0 ? null : splits.reduce((sum, split) => sum + split.rows, 0),
      splits
    }
  })

  return HubDatasets.of({ describe })
})

/** Dataset metadata from a Hugging Face-style hub API over the given (SSRF-guarded) `HttpClient`. */
export const HubDatasetsHttp = {
  layer: (options: HubDatasetsHttpOptions): Layer.Layer<HubDatasets, never, HttpClient.HttpClient> =>
    Layer.effect(HubDatasets, make(options))
}
