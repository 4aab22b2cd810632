import { Layer } from "effect"
import { TraceReaderPg } from "./TraceReaderPg.ts"
import { TraceWriterPg } from "./TraceWriterPg.ts"

/** The inference context's ports on Postgres: traces, written by group commit and read back. */
export const InferencePg = {
  layer: Layer.mergeAll(TraceWriterPg.layer, TraceReaderPg.layer)
}
