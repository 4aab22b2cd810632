import { type DateTime, Result, Schema } from "effect"
import { InvalidInput, WorkspaceId } from "../shared/index.ts"
import { type Candidate, LeaderboardId } from "../leaderboards/index.ts"
import { CaseId, DocumentId, DocumentScope, limits, type ResponseId } from "./HumanEval.ts"
import { type Slot, Stage } from "./CaseStage.ts"

/**
 * A human-evaluation case: what the candidates are asked (input, context, prompt, documents),
 * under which leaderboard configuration, and its stage (CaseStage.ts). CaseLifecycle.ts moves it.
 */

/** What anyone may see of a document: never its bytes or text. */
export const DocumentMetadata = Schema.Struct({
  id: DocumentId,
  name: Schema.String,
  scope: DocumentScope,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  sha256: Schema.String
})
export type DocumentMetadata = typeof DocumentMetadata.Type

export const metadataOf = ({ id, media_type, name, scope, sha256, size_bytes }: DocumentMetadata): DocumentMetadata =>
  ({ id, name, scope, media_type, size_bytes, sha256 })

/** A document as a case carries it: the metadata snapshotted into the draft, never the bytes. */
export const Attachment = Schema.Struct({ ...DocumentMetadata.fields, text_chars: Schema.Int })
export type Attachment = typeof Attachment.Type

export class HumanCase extends Schema.Class<HumanCase>("HumanCase")({
  id: CaseId,
  leaderboard_id: LeaderboardId,
  workspace_id: WorkspaceId,
  input: Schema.String,
  context: Schema.String,
  /** null inherits the leaderboard's base prompt; "" is an intentional empty prompt. */
  prompt_override: Schema.NullOr(Schema.String),
  /** The prompt the candidates get: the override, else the base prompt when the draft was saved. */
  prompt: Schema.String,
  attachments: Schema.Array(Attachment),
  /** The leaderboard configuration (candidates, base prompt) the draft was made under. */
  configuration: Schema.String,
  /** `creationKey` of the request that created the case, to tell a retry from a reuse of the id. */
  creation_key: Schema.String,
  revision: Schema.Int,
  stage: Stage,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

export interface CreateInput {
  readonly id: CaseId
  readonly input: string
  readonly context?: string | undefined
  readonly prompt_override?: string | null | undefined
}

/** A text field within its limit, else the `InvalidInput` naming it. */
export const checkLength = (field: string, value: string, max: number): Result.Result<void, InvalidInput> =>
  value.length <= max
    ? Result.void
    : Result.fail(new InvalidInput({ message: `${field} is longer than ${max.toLocaleString("en")} characters`, path: [field] }))

/** Part 2's rules on a case body: a nonblank input; input, context and prompt up to 32,000 characters. */
export const checkCaseText = (input: CreateInput): Result.Result<void, InvalidInput> => {
  if (input.input.trim() === "") return Result.fail(new InvalidInput({ message: "input must not be blank", path: ["input"] }))
  const lengths = Result.all([
    checkLength("input", input.input, limits.caseText),
    checkLength("context", input.context ?? "", limits.caseText),
    checkLength("prompt_override", input.prompt_override ?? "", limits.caseText)
  ])
  return Result.map(lengths, () => undefined)
}

/** A new draft, with the configuration and shared documents of this moment. */
export const createCase = (input: CreateInput & {
  readonly attachment_ids?: ReadonlyArray<string> | undefined
  readonly leaderboardId: LeaderboardId
  readonly workspaceId: WorkspaceId
  readonly basePrompt: string
  readonly attachments: ReadonlyArray<Attachment>
  readonly configuration: string
  readonly now: DateTime.Utc
}): Result.Result<HumanCase, InvalidInput> =>
  Result.map(checkCaseText(input), () => {
    const prompt_override = input.prompt_override ?? null
    return new HumanCase({
      id: input.id,
      leaderboard_id: input.leaderboardId,
      workspace_id: input.workspaceId,
      input: input.input,
      context: input.context ?? "",
      prompt_override,
      prompt: prompt_override ?? input.basePrompt,
      attachments: input.attachments,
      configuration: input.configuration,
      creation_key: creationKey(input),
      revision: 1,
      stage: Stage.cases.Draft.make({}),
      created_at: input.now,
      updated_at: input.now
    })
  })

/**
 * What a creation request asked for, canonically: a retry with the same id is the same request
 * exactly when its key is equal (later config saves do not change the key).
 */
export const creationKey = (input: CreateInput & { readonly attachment_ids?: ReadonlyArray<string> | undefined }): string =>
  JSON.stringify([
    input.input,
    input.context ?? "",
    input.prompt_override ?? null,
    [...new Set(input.attachment_ids ?? [])].sort()
  ])

/** Blind labels "A", "B", … given to candidates in the order of `shuffled` (a permutation of their indices). */
export const slotsFor = (
  candidates: ReadonlyArray<Pick<Candidate, "id" | "name" | "platform" | "model_name">>,
  responseIds: ReadonlyArray<ResponseId>,
  shuffled: ReadonlyArray<number>
): ReadonlyArray<Slot> =>
  shuffled.map((index, position) => {
    const candidate = candidates[index]!
    return {
      response_id: responseIds[position]!,
      candidate_id: candidate.id,
      label: String.fromCharCode(65 + position),
      candidate_name: candidate.name,
      platform: candidate.platform,
      model_name: candidate.model_name
    }
  })

/** The base prompt of a human leaderboard: its challenge's system prompt ("" when none). */
export const basePromptOf = (challenge: { readonly system_prompt: string | null }): string => challenge.system_prompt ?? ""

/**
 * What a draft is generated under: the base prompt and each candidate's calling configuration.
 * Equal strings mean the same configuration; any change (a candidate added, removed or replaced, a
 * new base prompt) makes generating an older draft a 409.
 */
export const configurationOf = (
  basePrompt: string,
  candidates: ReadonlyArray<
    { readonly id: string } & Pick<Candidate, "platform" | "model_name" | "url" | "model_id" | "auth_type" | "auth_header_name">
  >
): string =>
  JSON.stringify({
    base_prompt: basePrompt,
    candidates: [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((c) => [
      c.id,
      c.platform,
      c.model_name,
      c.url,
      c.model_id,
      c.auth_type,
      c.auth_header_name
    ])
  })

/**
 * The chat every candidate of a case gets: the case's prompt as the system message (none when
 * empty), then one user message with each attached document's text, the context, and the input.
 */
export const generationMessages = (
  c: Pick<HumanCase, "prompt" | "context" | "input">,
  documents: ReadonlyArray<{ readonly name: string; readonly text: string }>
): ReadonlyArray<{ readonly role: "system" | "user"; readonly content: string }> => {
  const parts = [
    ...documents.map((d) => `Document: ${d.name}\n${d.text}`),
    ...(c.context === "" ? [] : [`Context:\n${c.context}`]),
    c.input
  ]
  return [
    ...(c.prompt === "" ? [] : [{ role: "system" as const, content: c.prompt }]),
    { role: "user" as const, content: parts.join("\n\n") }
  ]
}
