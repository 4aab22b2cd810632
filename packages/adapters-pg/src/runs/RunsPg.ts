import { Layer } from "effect"
import { HumanVerdictsPg } from "./HumanVerdictsPg.ts"
import { ImprovementRepositoryPg } from "./ImprovementRepositoryPg.ts"
import { RunRepositoryPg } from "./RunRepositoryPg.ts"

/** The runs context's ports on Postgres. */
export const RunsPg = {
  layer: Layer.mergeAll(RunRepositoryPg.layer, ImprovementRepositoryPg.layer, HumanVerdictsPg.layer)
}
