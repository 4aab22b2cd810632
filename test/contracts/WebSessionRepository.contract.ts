import { assert, describe, layer } from "@effect/vitest"
import { User, WebSession, WebSessionRepository, WorkspaceRepository } from "@podium/domain/access"
import { UserId, WorkspaceId } from "@podium/domain/shared"
import { DateTime, Effect, type Layer, Option } from "effect"

const t0 = DateTime.makeUnsafe("2026-11-28T10:00:00.000Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })

/** A session of a new user, from `opened` to `ends` (minutes after t0), stored under a fresh digest. */
const aSession = (opened: number, ends: number) =>
  Effect.gen(function*() {
    const id = UserId.make(crypto.randomUUID())
    yield* (yield* WorkspaceRepository).createUser(
      new User({ id, subject: `web-${id}`, email: `${id}@example.com` }),
      WorkspaceId.make(crypto.randomUUID()),
      at(opened)
    )
    const session = new WebSession({
      user_id: id,
      subject: `web-${id}`,
      email: `${id}@example.com`,
      email_verified: true,
      created_at: at(opened),
      expires_at: at(ends)
    })
    const hash = `digest-${crypto.randomUUID()}`
    yield* (yield* WebSessionRepository).insert(session, hash)
    return { session, hash }
  })

/**
 * The behaviour WebSessions relies on, declared once and run against every adapter of
 * `WebSessionRepository` (STYLE.md 19): `makeLayer` builds a fresh one, with the users it refers to.
 */
export const webSessionRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<WebSessionRepository | WorkspaceRepository, unknown>
) =>
  describe(`WebSessionRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("finds a session by its digest while it lasts, as it was stored", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const { hash, session } = yield* aSession(0, 60)
          assert.deepStrictEqual(yield* sessions.findLive(hash, at(59)), Option.some(session))
          assert.isTrue(Option.isNone(yield* sessions.findLive(`${hash}-not`, at(1))))
        }))

      it.effect("does not find a session at or after its end, and removes it as it is found", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const { hash } = yield* aSession(0, 60)
          assert.isTrue(Option.isNone(yield* sessions.findLive(hash, at(60))))
          // gone, not just hidden: an earlier clock does not bring it back
          assert.isTrue(Option.isNone(yield* sessions.findLive(hash, at(1))))
        }))

      it.effect("removes one session at once, once; the others stay", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          const [one, two] = [yield* aSession(0, 60), yield* aSession(0, 60)]
          assert.isTrue(yield* sessions.remove(one.hash))
          assert.isFalse(yield* sessions.remove(one.hash))
          assert.isTrue(Option.isNone(yield* sessions.findLive(one.hash, at(1))))
          assert.isTrue(Option.isSome(yield* sessions.findLive(two.hash, at(1))))
        }))

      it.effect("removes every session that has ended, and only those", () =>
        Effect.gen(function*() {
          const sessions = yield* WebSessionRepository
          // sessions of earlier tests on this layer end at minute 60 at the latest
          yield* sessions.removeEnded(at(24 * 60))
          const [early, edge, late] = [yield* aSession(1000, 1010), yield* aSession(1000, 1020), yield* aSession(1000, 1030)]
          assert.strictEqual(yield* sessions.removeEnded(at(1020)), 2)
          assert.strictEqual(yield* sessions.removeEnded(at(1020)), 0)
          assert.isTrue(Option.isNone(yield* sessions.findLive(early.hash, at(1001))))
          assert.isTrue(Option.isNone(yield* sessions.findLive(edge.hash, at(1001))))
          assert.isTrue(Option.isSome(yield* sessions.findLive(late.hash, at(1021))))
        }))
    })
  })
