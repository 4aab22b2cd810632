import { Layer } from "effect"
import { InferableTargets } from "./InferableTargets.ts"
import { Inference } from "./Inference.ts"
import { TraceExport } from "./TraceExport.ts"

/**
 * The inference context wired: its use cases over its ports (traces, the chat provider, prices) and
 * the services every context calling a candidate shares (ChatTargets, CallBudgets, and the
 * ServiceModels the models context answers), which the composition provides once for all.
 */
export const InferenceUseCases = {
  layer: Layer.mergeAll(Inference.layer, TraceExport.layer, InferableTargets.layer)
}
