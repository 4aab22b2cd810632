import { Layer } from "effect"
import { Labellers } from "../datasets/index.ts"
import { AutoSelection } from "./AutoSelection.ts"
import { DatasetImprovements } from "./DatasetImprovements.ts"
import { RunDatasets } from "./RunDatasets.ts"
import { Runs } from "./Runs.ts"
import { RunScheduler } from "./RunScheduler.ts"
import { RunSteps } from "./RunSteps.ts"

/**
 * The runs context wired: its use cases over its ports (runs, improvements, human verdicts, the
 * queues) and the services of the contexts it builds on (leaderboards, inference's calls, the
 * datasets' labellers).
 */
export const RunsUseCases = {
  layer: Layer.mergeAll(
    AutoSelection.layer,
    Runs.layer,
    RunSteps.layer,
    RunScheduler.layer,
    DatasetImprovements.layer.pipe(Layer.provide(Labellers.layer))
  ).pipe(Layer.provide(RunDatasets.layer))
}
