import type { Scope } from "@podium/domain/access"
import type { CandidateId, ChosenModelStrategy, LeaderboardId } from "@podium/domain/leaderboards"
import type { WorkspaceId } from "@podium/domain/shared"
import type { AddCandidateRequest, CreateLeaderboardRequest } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import type { CreateTokenRequest } from "@podium/adapters-http/access/TokensApi"
import { type Caller, client } from "./Client.ts"
import { type Podium, session, type SessionOptions } from "./Podium.ts"

/** Test data ("mothers"): valid requests with defaults a test overrides only where it cares. */

export type NewLeaderboard = typeof CreateLeaderboardRequest.Type
export type NewCandidate = typeof AddCandidateRequest.Type
export type NewToken = typeof CreateTokenRequest.Type

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
