import { Option, Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"

/** `owner/name` of a dataset on the hub. */
export const HubDatasetId = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][\w.-]*\/[\w.-]+$/)).pipe(
  Schema.brand("HubDatasetId")
)
export type HubDatasetId = typeof HubDatasetId.Type

const segment = /^[A-Za-z0-9][\w.-]{0,95}$/

/**
 * Reads a dataset id from what people paste: `https://<hub>/datasets/owner/name[/tree/...|/viewer/...]`,
 * `hf://datasets/owner/name`, or plain `owner/name`.
 */
export const parseHubDatasetUrl = (input: string): Result.Result<HubDatasetId, InvalidInput> => {
  const invalid = Result.fail(new InvalidInput({
    message: "Expected a hub dataset URL like https://huggingface.co/datasets/owner/name",
    path: ["dataset_url"]
  }))
  const text = input.trim()
  let parts: Array<string>
  if (/^[^/:]+\/[^/:]+$/.test(text)) {
    parts = text.split("/")
  } else {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return invalid
    }
    if (!["http:", "https:", "hf:"].includes(url.protocol)) return invalid
    const path = url.protocol === "hf:" ? `/${url.hostname}${url.pathname}` : url.pathname
    const match = /^\/datasets\/([^/]+)\/([^/]+)(?:\/.*)?$/.exec(path)
    if (match === null) return invalid
    parts = [match[1]!, match[2]!]
  }
  const [owner, name] = parts
  if (owner === undefined || name === undefined || !segment.test(owner) || !segment.test(name)) return invalid
  return Option.match(HubDatasetId.makeOption(`${owner}/${name}`), { onNone: () => invalid, onSome: Result.succeed })
}

/** Rows a dataset needs before a model can learn from it (spec: model assignment). */
export const minimumDatasetRows = 100

export interface HubSplit {
  readonly name: string
  readonly rows: number
}

export interface HubDatasetInfo {
  readonly id: HubDatasetId
  readonly private: boolean
  readonly gated: boolean
  /** Total rows over every split, when the hub states them. */
  readonly rows: number | null
  readonly splits: ReadonlyArray<HubSplit>
}

export class HubDatasetNotFound extends Schema.TaggedError<HubDatasetNotFound>()("HubDatasetNotFound", {
  dataset_id: Schema.String
}) {}
