import { Layer } from "effect"
import { InferableTargetsPg } from "./InferableTargetsPg.ts"
import { TraceReaderPg } from "./TraceReaderPg.ts"
import { TraceWriterPg } from "./TraceWriterPg.ts"

/** The inference context's ports on Postgres: traces, written by group commit and read back; the inference targets. */
export const InferencePg = {
  layer: Layer.mergeAll(TraceWriterPg.layer, TraceReaderPg.layer, InferableTargetsPg.layer)
}
