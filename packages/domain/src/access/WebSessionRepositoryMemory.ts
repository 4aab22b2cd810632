import { Effect, Layer, Option, Ref } from "effect"
import { isWebSessionLive, type WebSession } from "./WebSession.ts"
import { WebSessionRepository } from "./WebSessionRepository.ts"

/** WebSessionRepository in memory, with the Postgres adapter's semantics. */
const layer = Layer.effect(
  WebSessionRepository,
  Effect.gen(function*() {
    const state = yield* Ref.make<ReadonlyMap<string, WebSession>>(new Map())
    const without = (sessions: ReadonlyMap<string, WebSession>, keep: (session: WebSession) => boolean) =>
      new Map([...sessions].filter(([, session]) => keep(session)))
    return WebSessionRepository.of({
      insert: (session, secretHash) => Ref.update(state, (sessions) => new Map(sessions).set(secretHash, session)),
      findLive: (secretHash, now) =>
        Ref.modify(state, (sessions) => {
          const found = sessions.get(secretHash)
          if (found === undefined) return [Option.none(), sessions]
          if (isWebSessionLive(found, now)) return [Option.some(found), sessions]
          return [Option.none(), without(sessions, (session) => session !== found)]
        }),
      remove: (secretHash) =>
        Ref.modify(state, (sessions) => {
          if (!sessions.has(secretHash)) return [false, sessions]
          const rest = new Map(sessions)
          rest.delete(secretHash)
          return [true, rest]
        }),
      removeEnded: (now) =>
        Ref.modify(state, (sessions) => {
          const rest = without(sessions, (session) => isWebSessionLive(session, now))
          return [sessions.size - rest.size, rest]
        })
    })
  })
)

export const WebSessionRepositoryMemory = { layer }
