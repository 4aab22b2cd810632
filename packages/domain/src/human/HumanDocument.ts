import { Result, Schema } from "effect"
import { type Attachment, metadataOf } from "./HumanCase.ts"
import { DocumentId, DocumentScope, limits } from "./HumanEval.ts"
import { DocumentLimitExceeded } from "./HumanEvalErrors.ts"
import { WorkspaceId } from "../shared/index.ts"
import { LeaderboardId } from "../leaderboards/index.ts"

/**
 * An uploaded document of a human leaderboard: `case` documents are attached to cases by id;
 * `shared` ones are snapshotted into every new draft until archived. The bytes and the extracted
 * text are stored with it but never returned.
 */
export class HumanDocument extends Schema.Class<HumanDocument>("HumanDocument")({
  id: DocumentId,
  leaderboard_id: LeaderboardId,
  workspace_id: WorkspaceId,
  name: Schema.String,
  scope: DocumentScope,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  sha256: Schema.String,
  text_chars: Schema.Int,
  created_at: Schema.DateTimeUtc,
  archived_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

export const attachmentOf = (d: HumanDocument): Attachment => ({ ...metadataOf(d), text_chars: d.text_chars })

/** A retry of an upload: the same id with the same name, scope and bytes. */
export const sameUpload = (d: HumanDocument, upload: { readonly name: string; readonly scope: string; readonly sha256: string }) =>
  d.name === upload.name && d.scope === upload.scope && d.sha256 === upload.sha256

const exceeded = (message: string, limit: number) => Result.fail(new DocumentLimitExceeded({ message, limit }))

/** One document: at most `limits.documentBytes` decoded, and `limits.documentText` characters of text. */
export const checkDocument = (sizeBytes: number, textChars: number): Result.Result<void, DocumentLimitExceeded> =>
  sizeBytes > limits.documentBytes
    ? exceeded(`The document is larger than ${limits.documentBytes} bytes`, limits.documentBytes)
    : textChars > limits.documentText
    ? exceeded(`The document's text is longer than ${limits.documentText} characters`, limits.documentText)
    : Result.void

/** Everything a case carries (its own documents and the shared ones): at most `limits.caseDocumentText` characters. */
export const checkCaseDocuments = (attachments: ReadonlyArray<Pick<Attachment, "text_chars">>): Result.Result<void, DocumentLimitExceeded> =>
  attachments.reduce((sum, a) => sum + a.text_chars, 0) > limits.caseDocumentText
    ? exceeded(
      `The case's documents (its own and the shared ones) hold more than ${limits.caseDocumentText} characters of text`,
      limits.caseDocumentText
    )
    : Result.void
