import { randomUUID } from "node:crypto"
import type { Scope } from "@podium/domain/access"
import { CaseId, DocumentId, type ResponseId, type Verdict } from "@podium/domain/human"
import type { CandidateId, ChosenModelStrategy, LeaderboardId } from "@podium/domain/leaderboards"
import type { WorkspaceId } from "@podium/domain/shared"
import type { AddCandidateRequest, CreateLeaderboardRequest } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import type { CreateTokenRequest } from "@podium/adapters-http/access/TokensApi"
import type { CaseCreateRequest, DocumentUploadRequest } from "@podium/adapters-http/human/HumanApi"
import { type Caller, client } from "./Client.ts"
import { type Podium, session, type SessionOptions } from "./Podium.ts"

/** Test data ("mothers"): valid requests with defaults a test overrides only where it cares. */

export type NewLeaderboard = typeof CreateLeaderboardRequest.Type
export type NewCandidate = typeof AddCandidateRequest.Type
export type NewToken = typeof CreateTokenRequest.Type
export type NewCase = typeof CaseCreateRequest.Type
export type NewDocument = typeof DocumentUploadRequest.Type

/** A leaderboard fed by pushes, so it needs no dataset URL. */
export const aLeaderboard = (overrides: Partial<NewLeaderboard> = {}): NewLeaderboard => ({
  name: "Support answers",
  dataset_type: "PUSH",
  ...overrides
})

/** A Custom candidate: the OpenAI-compatible endpoint at `upstreamUrl`, without credentials. */
export const aCandidate = (upstreamUrl: string, overrides: Partial<NewCandidate> = {}): NewCandidate => ({
  name: "custom",
  platform: "Custom",
  url: upstreamUrl,
  auth_type: "none",
  ...overrides
})

/** A Router candidate (the platform a candidate has when none is named). */
export const aRouterCandidate = (overrides: Partial<NewCandidate> = {}): NewCandidate => ({
  name: "gpt mini",
  model_name: "openai/gpt-4o-mini",
  ...overrides
})

/** An API token with exactly `scopes` (every scope when omitted). */
export const aToken = (scopes?: ReadonlyArray<Scope>, overrides: Partial<NewToken> = {}): NewToken => ({
  name: scopes === undefined ? "every scope" : scopes.join(" "),
  ...(scopes === undefined ? {} : { scopes }),
  ...overrides
})

export interface SignedIn {
  /** The session JWT. */
  readonly session: string
  /** The personal workspace (the first request creates it). */
  readonly workspace: WorkspaceId
  /** A typed client acting with the session. */
  readonly api: Caller
}

/** A user signed in with a session, with their personal workspace. */
export const signedIn = async (podium: Podium, subject: string, options?: SessionOptions): Promise<SignedIn> => {
  const token = await session(subject, options)
  const api = client(podium, token)
  const { business_id } = await api((c) => c.tokens.list({ query: {} }))
  return { session: token, workspace: business_id, api }
}

/** The secret of a new API token of the caller's workspace with `scopes`. */
export const apiToken = async (api: Caller, scopes?: ReadonlyArray<Scope>, overrides?: Partial<NewToken>) =>
  (await api((c) => c.tokens.create({ payload: aToken(scopes, overrides) }))).secret

/** A leaderboard serving `candidate` by manual choice: what inference needs. */
export const servingLeaderboard = async (
  api: Caller,
  candidate: NewCandidate,
  leaderboard: NewLeaderboard = aLeaderboard()
): Promise<{ readonly id: LeaderboardId; readonly candidate: CandidateId }> => {
  const { id } = (await api((c) => c.leaderboards.create({ payload: leaderboard }))).leaderboard
  const { model } = await api((c) => c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: candidate }))
  await choose(api, id, model.id)
  return { id, candidate: model.id }
}

/** Makes `candidate` the leaderboard's serving model (`strategy` manual unless said otherwise). */
export const choose = (
  api: Caller,
  id: LeaderboardId,
  candidate: CandidateId,
  strategy: typeof ChosenModelStrategy.Type = "manual"
) =>
  api((c) =>
    c.leaderboards.update({
      params: { leaderboard_id: id },
      payload: { chosen_model_strategy: strategy, chosen_leaderboard_model_id: candidate }
    })
  )

/** A leaderboard judged by people (human evaluation), fed by pushes. */
export const aHumanLeaderboard = (overrides: Partial<NewLeaderboard> = {}): NewLeaderboard =>
  aLeaderboard({ name: "blind", eval_type: "human", ...overrides })

/** A human leaderboard with `candidates`, returning its id and the candidates' ids and names. */
export const humanLeaderboard = async (
  api: Caller,
  candidates: ReadonlyArray<NewCandidate>,
  leaderboard: NewLeaderboard = aHumanLeaderboard()
) => {
  const { id } = (await api((c) => c.leaderboards.create({ payload: leaderboard }))).leaderboard
  const added: Array<{ readonly id: CandidateId; readonly name: string }> = []
  for (const candidate of candidates) {
    const { model } = await api((c) => c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: candidate }))
    added.push({ id: model.id, name: model.name })
  }
  return { id, candidates: added }
}

/** A draft case with a fresh client id. */
export const aCase = (overrides: Partial<NewCase> = {}): NewCase => ({
  id: CaseId.make(randomUUID()),
  input: "Refund window?",
  ...overrides
})

/** A case document holding `data` (text as UTF-8), with a fresh client id. */
export const aDocument = (data: string | Uint8Array, overrides: Partial<NewDocument> = {}): NewDocument => ({
  id: DocumentId.make(randomUUID()),
  name: "notes.txt",
  scope: "case",
  data: typeof data === "string" ? new TextEncoder().encode(data) : data,
  ...overrides
})

/** Creates a case; `status` tells a new one (201) from an identical retry (200). */
export const createCase = async (api: Caller, leaderboard_id: LeaderboardId, payload: NewCase) => {
  const [body, response] = await api((c) =>
    c.human.createCase({ params: { leaderboard_id }, payload, responseMode: "decoded-and-response" })
  )
  return { status: response.status, body }
}

/** Uploads a document; `status` tells a new one (201) from an identical retry (200). */
export const uploadDocument = async (api: Caller, leaderboard_id: LeaderboardId, payload: NewDocument) => {
  const [body, response] = await api((c) =>
    c.human.uploadDocument({ params: { leaderboard_id }, payload, responseMode: "decoded-and-response" })
  )
  return { status: response.status, body }
}

/** Generates the case's responses, one per candidate. */
export const generate = (api: Caller, leaderboard_id: LeaderboardId, case_id: CaseId) =>
  api((c) => c.human.generate({ params: { leaderboard_id, case_id }, payload: {} }))

/** The same verdict on every response. */
export const verdictsOn = (responses: ReadonlyArray<{ readonly id: ResponseId }>, verdict: Verdict) =>
  Object.fromEntries(responses.map((r) => [r.id, verdict]))

/** A PUSH leaderboard of the caller's workspace (rules from `overrides`), by id. */
export const pushLeaderboard = async (api: Caller, overrides: Partial<NewLeaderboard> = {}): Promise<LeaderboardId> =>
  (await api((c) => c.leaderboards.create({ payload: aLeaderboard(overrides) }))).leaderboard.id

export interface PushRow {
  readonly id?: string
  readonly input: string
  readonly expected?: string
  readonly [field: string]: unknown
}

/** `count` distinct rows `{input, expected}` named after `prefix`; with `ids`, each has the client id `${prefix}-${i}`. */
export const pushRows = (count: number, prefix = "q", options: { readonly ids?: boolean } = {}): Array<PushRow> =>
  Array.from({ length: count }, (_, i) => ({
    ...(options.ids === true ? { id: `${prefix}-${i}` } : {}),
    input: `${prefix} ${i}?`,
    expected: `answer ${i}`
  }))

/** The secret (`hpd_…`) of a new push token of the leaderboard's dataset. */
export const pushToken = async (api: Caller, leaderboard_id: LeaderboardId, name = "ingest"): Promise<string> => {
  const { secret } = await api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id }, payload: { name } }))
  if (secret === undefined) throw new Error("issueToken answered without a secret")
  return secret
}

/**
 * Path ids a contract's UUID schema refuses, made from a real `id`: shaped like a GUID but not an
 * RFC 4122 UUID, upper case, braced, a character short, not hex, empty, the last character
 * percent-encoded.
 */
export const malformedIds = (id: string): ReadonlyArray<string> => [
  "12345678-1234-0234-8234-123456789abc",
  id.toUpperCase(),
  `{${id}}`,
  id.slice(0, -1),
  `g${id.slice(1)}`,
  "",
  `${id.slice(0, -1)}%${id.charCodeAt(id.length - 1).toString(16)}`
]
