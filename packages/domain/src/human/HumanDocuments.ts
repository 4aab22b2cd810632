import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import { NotFound } from "../shared/index.ts"
import type { Principal } from "../access/index.ts"
import type { DocumentId, DocumentScope } from "./HumanEval.ts"
import { type DocumentLimitExceeded, IdReused } from "./HumanEvalErrors.ts"
import type { UnsupportedDocument } from "./DocumentErrors.ts"
import { checkCaseDocuments, checkDocument, HumanDocument, sameUpload } from "./HumanDocument.ts"
import { HumanAccess, type HumanAccessError } from "./HumanAccess.ts"
import { DocumentReader } from "./DocumentReader.ts"
import { HumanDocumentRepository } from "./HumanDocumentRepository.ts"

export interface DocumentUpload {
  readonly id: DocumentId
  readonly name: string
  readonly scope: DocumentScope
  /** The decoded bytes. */
  readonly data: Uint8Array
}

/**
 * The documents of a human leaderboard: uploaded once, read for their text, attached to cases
 * (`case` scope) or to every new case until archived (`shared` scope).
 */
export class HumanDocuments extends Context.Service<HumanDocuments, {
  readonly upload: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    upload: DocumentUpload
  ) => Effect.Effect<
    { readonly document: HumanDocument; readonly created: boolean },
    HumanAccessError | UnsupportedDocument | DocumentLimitExceeded | IdReused
  >
  readonly shared: (principal: Principal, leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyArray<HumanDocument>, HumanAccessError>
  /** Archives a shared document for future cases; the drafts that carry it keep it. */
  readonly archive: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: DocumentId
  ) => Effect.Effect<HumanDocument, HumanAccessError>
}>()("@podium/domain/human/HumanDocuments") {
  static readonly layer = Layer.effect(
    HumanDocuments,
    Effect.gen(function*() {
      const access = yield* HumanAccess
      const documents = yield* HumanDocumentRepository
      const reader = yield* DocumentReader

      const upload = Effect.fn("HumanDocuments.upload")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        upload: DocumentUpload
      ) {
        const { serving } = yield* access.open(principal, leaderboardId)
        yield* Effect.fromResult(checkDocument(upload.data.length, 0))
        const read = yield* reader.read(upload.name, upload.data)
        yield* Effect.fromResult(checkDocument(upload.data.length, read.text.length))
        const document = new HumanDocument({
          id: upload.id,
          leaderboard_id: leaderboardId,
          workspace_id: serving.leaderboard.workspace_id,
          name: upload.name,
          scope: upload.scope,
          media_type: read.media_type,
          size_bytes: upload.data.length,
          sha256: read.sha256,
          text_chars: read.text.length,
          created_at: yield* DateTime.now,
          archived_at: null
        })
        if (upload.scope === "shared") {
          // every new case carries all active shared documents: they must fit one case together
          yield* Effect.fromResult(checkCaseDocuments([...yield* documents.shared(leaderboardId), document]))
        }
        const inserted = yield* documents.insert(document, upload.data, read.text)
        if (inserted._tag === "Inserted") return { document, created: true }
        const existing = inserted.existing
        if (Option.isSome(existing) && existing.value.archived_at === null && sameUpload(existing.value, document)) {
          return { document: existing.value, created: false }
        }
        return yield* new IdReused({
          id: upload.id,
          message: Option.isNone(existing)
            ? "This id is already used: use a fresh UUID for a new document"
            : existing.value.archived_at !== null
            ? "This id belongs to an archived document and cannot be reused"
            : "A document with this id exists with other content: use a fresh UUID for a new document"
        })
      })

      const shared = Effect.fn("HumanDocuments.shared")(function*(principal: Principal, leaderboardId: LeaderboardId) {
        yield* access.open(principal, leaderboardId)
        return yield* documents.shared(leaderboardId)
      })

      const archive = Effect.fn("HumanDocuments.archive")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: DocumentId
      ) {
        yield* access.open(principal, leaderboardId)
        const archived = yield* documents.archive(leaderboardId, id, yield* DateTime.now)
        if (Option.isNone(archived)) return yield* new NotFound({ resource: "shared document", id })
        return archived.value
      })

      return HumanDocuments.of({ upload, shared, archive })
    })
  )
}
