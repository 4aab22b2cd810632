import { Context, Effect, Layer, Option, type Redacted, Stream } from "effect"
import { DatasetRepository } from "../datasets/index.ts"
import { IntegrationRepository } from "../integrations/index.ts"
import type { Leaderboard } from "../leaderboards/index.ts"
import { SecretCipher } from "../shared/index.ts"
import { type DatasetUnavailable, RunDatasetSource } from "./RunDatasetSource.ts"
import { DatasetMissing } from "./RunErrors.ts"

/** Where a GET dataset lives on the hub: the workspace's hub token goes only there. */
const isHubUrl = (url: string) => /^(https?:\/\/(www\.)?huggingface\.co\/datasets\/|hf:\/\/datasets\/)/i.test(url)

export interface DatasetRows {
  readonly raw: ReadonlyArray<unknown>
  /** The GET dataset's URL, or null. */
  readonly url: string | null
  /** The PUSH dataset's version, or null. */
  readonly version: number | null
}

/** The rows of a leaderboard's dataset as they are now: the GET URL's (fetched now) or the PUSH dataset's latest version. */
export class RunDatasets extends Context.Service<RunDatasets, {
  readonly load: (leaderboard: Leaderboard) => Effect.Effect<DatasetRows, DatasetUnavailable | DatasetMissing>
}>()("@podium/domain/runs/RunDatasets") {
  static readonly layer = Layer.effect(
    RunDatasets,
    Effect.gen(function*() {
      const datasets = yield* DatasetRepository
      const source = yield* RunDatasetSource
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher

      const load = Effect.fn("RunDatasets.load")(function*(leaderboard: Leaderboard) {
        const { dataset_type, dataset_url } = leaderboard.challenge
        if (dataset_type === "GET") {
          if (dataset_url === null || dataset_url.trim() === "") {
            return yield* new DatasetMissing({ leaderboard_id: leaderboard.id, message: "Set dataset_url, then run" })
          }
          const hub = isHubUrl(dataset_url) ? yield* integrations.find(leaderboard.workspace_id, "hub") : Option.none()
          const token = Option.isSome(hub)
            ? Option.some(yield* cipher.open(hub.value.sealed_token))
            : Option.none<Redacted.Redacted<string>>()
          return { raw: yield* source.fetch(dataset_url, token), url: dataset_url, version: null }
        }
        const [latest] = yield* datasets.versions(leaderboard.id)
        if (latest === undefined) {
          return yield* new DatasetMissing({ leaderboard_id: leaderboard.id, message: "The dataset has no version" })
        }
        const rows = yield* datasets.download(leaderboard.id, latest.version).pipe(
          Stream.decodeText,
          Stream.splitLines,
          Stream.filter((line) => line !== ""),
          Stream.map((line) => JSON.parse(line) as unknown),
          Stream.runCollect,
          Effect.orDie
        )
        return { raw: Array.from(rows), url: null, version: latest.version }
      })

      return RunDatasets.of({ load })
    })
  )
}
