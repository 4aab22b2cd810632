import { Layer } from "effect"
import { DatasetLabelRepositoryPg } from "./DatasetLabelRepositoryPg.ts"
import { DatasetRepositoryPg } from "./DatasetRepositoryPg.ts"

/** The datasets context's ports on Postgres. */
export const DatasetsPg = {
  layer: Layer.mergeAll(DatasetRepositoryPg.layer, DatasetLabelRepositoryPg.layer)
}
