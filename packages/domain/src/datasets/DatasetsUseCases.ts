import { Layer } from "effect"
import { DatasetLabels } from "./DatasetLabels.ts"
import { Datasets } from "./Datasets.ts"
import { Labellers } from "./Labellers.ts"

/**
 * The datasets context wired: its use cases over its ports (datasets, auto-labels, their queue) and
 * the services of the contexts it builds on (leaderboards, inference's calls for the labellers).
 */
export const DatasetsUseCases = {
  layer: Layer.mergeAll(Datasets.layer, DatasetLabels.layer.pipe(Layer.provide(Labellers.layer)))
}
