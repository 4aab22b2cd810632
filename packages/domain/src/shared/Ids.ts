import { Schema } from "effect"

export const Uuid = Schema.String.check(Schema.isUUID())

export const WorkspaceId = Uuid.pipe(Schema.brand("WorkspaceId"))
export type WorkspaceId = typeof WorkspaceId.Type

/** Our own id for a person; the identity provider's `sub` maps to it. */
export const UserId = Uuid.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const TokenId = Uuid.pipe(Schema.brand("TokenId"))
export type TokenId = typeof TokenId.Type

export const InviteId = Uuid.pipe(Schema.brand("InviteId"))
export type InviteId = typeof InviteId.Type

/** A leaderboard's push token (not an API token). */
export const PushTokenId = Uuid.pipe(Schema.brand("PushTokenId"))
export type PushTokenId = typeof PushTokenId.Type

/** A budget reservation, held while a priced call is in flight and settled after it. */
export const ReservationId = Uuid.pipe(Schema.brand("ReservationId"))
export type ReservationId = typeof ReservationId.Type

/** A run of a leaderboard's candidates over its dataset; traces of the run carry it. */
export const RunId = Uuid.pipe(Schema.brand("RunId"))
export type RunId = typeof RunId.Type

/** A model this service serves and fine-tunes; a Service candidate and a served call name it. */
export const ModelId = Uuid.pipe(Schema.brand("ModelId"))
export type ModelId = typeof ModelId.Type

/** One fine-tuned version of a model, the one a served call answered with. */
export const ModelVersionId = Uuid.pipe(Schema.brand("ModelVersionId"))
export type ModelVersionId = typeof ModelVersionId.Type

/** One fine-tune of a model (not a leaderboard's run), which makes a version. */
export const FineTuneRunId = Uuid.pipe(Schema.brand("FineTuneRunId"))
export type FineTuneRunId = typeof FineTuneRunId.Type

export const Email = Schema.String.check(
  Schema.isMaxLength(320),
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "Expected an email address" })
)
