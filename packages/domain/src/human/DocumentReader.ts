import { Context, type Effect } from "effect"
import type { UnsupportedDocument } from "./DocumentErrors.ts"

export interface ReadDocument {
  readonly media_type: string
  readonly text: string
  /** SHA-256 of the bytes, lowercase hex. */
  readonly sha256: string
}

/**
 * Turns an uploaded file into its media type and plain text. The type comes from the bytes; the
 * name only chooses among text types. Anything it cannot read is `UnsupportedDocument`, never a
 * defect. It does not enforce the size limits in `HumanEval.limits`: the caller does.
 */
export class DocumentReader extends Context.Service<DocumentReader, {
  readonly read: (name: string, bytes: Uint8Array) => Effect.Effect<ReadDocument, UnsupportedDocument>
}>()("@podium/domain/human/DocumentReader") {}
