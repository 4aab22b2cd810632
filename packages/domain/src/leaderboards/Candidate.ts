import { Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"
import { CandidateId, LeaderboardId } from "./Leaderboard.ts"

export const Platform = Schema.Literals(["Router", "Custom", "Hub", "Service"])
export type Platform = typeof Platform.Type

/** How a Custom candidate authenticates: `Authorization: Bearer` (default), a named header, or nothing. */
export const AuthType = Schema.Literals(["bearer", "header", "none"])
export type AuthType = typeof AuthType.Type

export class Candidate extends Schema.Class<Candidate>("Candidate")({
  id: CandidateId,
  leaderboard_id: LeaderboardId,
  name: Schema.String,
  platform: Platform,
  /** The provider's model id (Router, Hub, Custom). */
  model_name: Schema.NullOr(Schema.String),
  /** The candidate's endpoint, as given (the spec's field); Custom: the OpenAI-compatible base URL (`{model_url}/chat/completions` is called). */
  model_url: Schema.NullOr(Schema.String),
  /** The same as `model_url`, under its alias (older candidates may hold only this one). */
  url: Schema.NullOr(Schema.String),
  /** Service: the model object served by this service. */
  model_id: Schema.NullOr(Schema.String),
  auth_type: AuthType,
  auth_header_name: Schema.NullOr(Schema.String),
  has_token: Schema.Boolean.annotate({ description: "Whether the candidate has its own credential; never returned" }),
  input_price_per_m_tokens: Schema.NullOr(Schema.Finite),
  output_price_per_m_tokens: Schema.NullOr(Schema.Finite),
  created_at: Schema.DateTimeUtc
}) {}

const invalid = (message: string, field: string) => Result.fail(new InvalidInput({ message, path: [field] }))

export type EndpointField = "model_url" | "url"

/**
 * The endpoint a candidate is given: `model_url` (the spec's field) or `url`, its alias; both given
 * must agree. `field` is the one a refusal of the endpoint names: the one the caller used.
 */
export const endpointOf = (input: {
  readonly model_url?: string | undefined
  readonly url?: string | undefined
}): Result.Result<{ readonly url: string | null; readonly field: EndpointField }, InvalidInput> => {
  if (input.model_url !== undefined && input.url !== undefined && input.model_url !== input.url) {
    return invalid("model_url and url (its alias) differ: give one of them, or both the same", "model_url")
  }
  return Result.succeed(
    input.model_url === undefined && input.url !== undefined
      ? { url: input.url, field: "url" }
      : { url: input.model_url ?? null, field: "model_url" }
  )
}

/** What each platform needs to be callable; `url` is the endpoint, given as `endpoint_field`. */
export const checkCandidate = (c: {
  readonly platform: Platform
  readonly model_name: string | null
  readonly url: string | null
  readonly endpoint_field: EndpointField
  readonly model_id: string | null
  readonly auth_type: AuthType
  readonly auth_header_name: string | null
}): Result.Result<void, InvalidInput> => {
  switch (c.platform) {
    case "Service":
      return c.model_id === null ? invalid("A Service candidate needs model_id", "model_id") : Result.void
    case "Router":
    case "Hub":
      return c.model_name === null
        ? invalid(`A ${c.platform} candidate needs model_name (the provider's model id)`, "model_name")
        : Result.void
    case "Custom":
      if (c.url === null || !/^https?:\/\/[^\s/]+/.test(c.url)) {
        return invalid("A Custom candidate needs model_url (or its alias url): an http(s) base URL", c.endpoint_field)
      }
      return c.auth_type === "header" && c.auth_header_name === null
        ? invalid("auth_type header needs auth_header_name", "auth_header_name")
        : Result.void
  }
}
