import { Context, type DateTime, type Effect, type Option } from "effect"
import type { WebSession } from "./WebSession.ts"

/** Web sessions, each under the digest of its secret (never the secret itself). */
export class WebSessionRepository extends Context.Service<WebSessionRepository, {
  readonly insert: (session: WebSession, secretHash: string) => Effect.Effect<void>
  /** The session with this digest while it lasts at `now`; one that has ended is removed as it is found. */
  readonly findLive: (secretHash: string, now: DateTime.Utc) => Effect.Effect<Option.Option<WebSession>>
  /** Ends the session at once (sign-out); false when there was none. */
  readonly remove: (secretHash: string) => Effect.Effect<boolean>
  /** Removes every session that has ended by `now`; how many. */
  readonly removeEnded: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/access/WebSessionRepository") {}
