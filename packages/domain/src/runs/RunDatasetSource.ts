import { Context, type Effect, type Option, type Redacted, Schema } from "effect"

/** A GET dataset could not be read: unreachable, refused, too large, not a dataset file, no rows. */
export class DatasetUnavailable extends Schema.TaggedError<DatasetUnavailable>()("DatasetUnavailable", {
  url: Schema.String,
  reason: Schema.String
}) {}

/**
 * The rows of a GET dataset, read at run time: a file at `dataset_url` (JSONL, JSON array or CSV,
 * through the SSRF-safe client, at most 50 MiB and 100,000 rows) or, for a Hugging Face dataset page
 * (`https://huggingface.co/datasets/{owner}/{name}`), the rows of its first split through the hub's
 * dataset-viewer rows API at `HUB_BASE_URL`. Rows are returned as they are; mapping them to inputs
 * and references is the caller's.
 */
export class RunDatasetSource extends Context.Service<RunDatasetSource, {
  readonly fetch: (
    url: string,
    /** The workspace's hub integration token, sent to the hub (private or gated datasets). */
    hubToken: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, DatasetUnavailable>
}>()("@podium/domain/runs/RunDatasetSource") {}
