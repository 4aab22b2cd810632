import { Context, type DateTime, type Effect, type Option } from "effect"
import type { DocumentId } from "./HumanEval.ts"
import type { HumanDocument } from "./HumanDocument.ts"
import type { WorkspaceId } from "../shared/index.ts"
import type { LeaderboardId } from "../leaderboards/index.ts"

/** Documents of human leaderboards, their bytes and text kept beside them (never returned by reads of metadata). */
export class HumanDocumentRepository extends Context.Service<HumanDocumentRepository, {
  /** A new document; an id the workspace already used (for a document or a case) answers with the document stored under it, if any. */
  readonly insert: (
    document: HumanDocument,
    content: Uint8Array,
    text: string
  ) => Effect.Effect<{ readonly _tag: "Inserted" } | { readonly _tag: "Taken"; readonly existing: Option.Option<HumanDocument> }>
  readonly find: (leaderboardId: LeaderboardId, id: DocumentId) => Effect.Effect<Option.Option<HumanDocument>>
  /** Active shared documents, oldest first. */
  readonly shared: (leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyArray<HumanDocument>>
  /** Archives a shared document (once: the first time stays); None when there is no such shared document. */
  readonly archive: (leaderboardId: LeaderboardId, id: DocumentId, now: DateTime.Utc) => Effect.Effect<Option.Option<HumanDocument>>
  /** The extracted texts of the workspace's documents with these ids, in the order given. */
  readonly texts: (
    workspaceId: WorkspaceId,
    ids: ReadonlyArray<DocumentId>
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string; readonly text: string }>>
}>()("@podium/domain/human/HumanDocumentRepository") {}
