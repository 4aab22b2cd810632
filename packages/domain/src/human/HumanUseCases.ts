import { Layer } from "effect"
import { CaseGenerator } from "./CaseGenerator.ts"
import { HumanAccess } from "./HumanAccess.ts"
import { HumanCases } from "./HumanCases.ts"
import { HumanDocuments } from "./HumanDocuments.ts"
import { HumanResults } from "./HumanResults.ts"

/**
 * The human evaluation context wired: its use cases over its ports (cases, documents, the document
 * reader, the generation queue) and the services of the contexts it builds on (inference's calls).
 */
export const HumanUseCases = {
  layer: Layer.mergeAll(
    Layer.mergeAll(HumanCases.layer, HumanDocuments.layer, HumanResults.layer).pipe(Layer.provide(HumanAccess.layer)),
    CaseGenerator.layer
  )
}
