import { DateTime, Duration, Effect, Exit, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { IdGenerator } from "../shared/index.ts"
import { Unauthenticated } from "./AuthErrors.ts"
import { Identity } from "./Identity.ts"
import { InviteRepositoryMemory } from "./InviteRepositoryMemory.ts"
import { SessionVerifier, type VerifiedSession } from "./SessionVerifier.ts"
import { TokenSecrets } from "./TokenSecrets.ts"
import { WebSessionRepository } from "./WebSessionRepository.ts"
import { WebSessionRepositoryMemory } from "./WebSessionRepositoryMemory.ts"
import { WebSessions } from "./WebSessions.ts"
import { WorkspaceRepositoryMemory } from "./WorkspaceRepositoryMemory.ts"

// Opening, resolving and closing web sessions over the memory repositories with a test clock. The
// verifier knows the tokens below; secrets are numbered and their digests readable, so what is
// stored can be told from what the browser holds.

const t0 = Date.parse("2026-11-28T10:00:00.000Z")
const at = (seconds: number) => DateTime.makeUnsafe(t0 + seconds * 1000)

/** Tokens the verifier accepts: each one's claims and `exp`, seconds after t0. */
const tokens: Record<string, VerifiedSession> = {
  alice: { subject: "alice", email: "alice@example.com", emailVerified: true, expiresAt: at(3600) },
  "alice-brief": { subject: "alice", email: "alice@example.com", emailVerified: true, expiresAt: at(60) },
  "alice-late": { subject: "alice", email: "alice@example.com", emailVerified: true, expiresAt: at(-30) },
  bob: { subject: "bob", email: null, emailVerified: false, expiresAt: at(7200) }
}

const run = <A, E>(body: Effect.Effect<A, E, WebSessions | WebSessionRepository | TestClock.TestClock>) => {
  let minted = 0
  const secrets = Layer.succeed(TokenSecrets, TokenSecrets.of({
    mint: (prefix) =>
      Effect.sync(() => {
        const secret = `${prefix}${++minted}`
        return { secret: Redacted.make(secret), hash: `digest(${secret})`, displayPrefix: secret }
      }),
    digest: (secret) => `digest(${Redacted.value(secret)})`
  }))
  const verifier = Layer.succeed(SessionVerifier, SessionVerifier.of({
    verify: (token) => {
      const verified = tokens[Redacted.value(token)]
      return verified === undefined ? Effect.fail(new Unauthenticated({ message: "unknown token" })) : Effect.succeed(verified)
    }
  }))
  const ids = Layer.succeed(IdGenerator, IdGenerator.fromUuids({
    next: Effect.sync(() => crypto.randomUUID()),
    nextMany: (count) => Effect.sync(() => Array.from({ length: count }, () => crypto.randomUUID()))
  }))
  const repositories = Layer.mergeAll(
    WebSessionRepositoryMemory.layer,
    InviteRepositoryMemory.layer.pipe(Layer.provideMerge(WorkspaceRepositoryMemory.layer))
  )
  const layer = WebSessions.layer.pipe(
    Layer.provide(Identity.layer),
    Layer.provideMerge(Layer.mergeAll(repositories, secrets, verifier, ids)),
    Layer.provideMerge(TestClock.layer())
  )
  return Effect.runPromise(Effect.provide(Effect.andThen(TestClock.setTime(t0), body), layer))
}

const open = (token: string) => Effect.flatMap(WebSessions, (sessions) => sessions.open(Redacted.make(token)))
const resolve = (secret: Redacted.Redacted<string>) => Effect.flatMap(WebSessions, (sessions) => sessions.resolve(secret))
const refusal = <A>(effect: Effect.Effect<A, Unauthenticated, WebSessions>) =>
  Effect.map(Effect.exit(effect), (exit) => (Exit.isFailure(exit) ? exit.cause.toString() : "resolved"))

describe("WebSessions", () => {
  it("opens a session for the token's user that ends at the token's exp, storing the secret's digest only", () =>
    run(Effect.gen(function*() {
      const opened = yield* open("alice")
      expect(Redacted.value(opened.secret)).toBe("pws_1")
      expect(opened.session.expires_at).toEqual(at(3600))
      expect(opened.session.created_at).toEqual(at(0))
      expect([opened.session.subject, opened.session.email, opened.session.email_verified]).toEqual(["alice", "alice@example.com", true])
      const repository = yield* WebSessionRepository
      expect(Option.isSome(yield* repository.findLive("digest(pws_1)", at(1)))).toBe(true)
      expect(Option.isNone(yield* repository.findLive("pws_1", at(1)))).toBe(true)
      // the CSRF token is the secret's digest under another label: neither the secret nor what is stored
      expect(opened.csrfToken).toBe("digest(csrf:pws_1)")
    })))

  it("refuses a token at or past its exp (the verifier's clock skew does not stretch a session)", () =>
    run(Effect.gen(function*() {
      expect(yield* refusal(open("alice-late"))).toMatch(/expired/)
      expect(yield* refusal(open("nobody"))).toMatch(/unknown token/)
      yield* TestClock.adjust(Duration.seconds(60))
      expect(yield* refusal(open("alice-brief"))).toMatch(/expired/)
    })))

  it("resolves to the session's user, as the token's own sign-in would, until the session ends", () =>
    run(Effect.gen(function*() {
      const opened = yield* open("alice-brief")
      const active = yield* resolve(opened.secret)
      expect(active.principal._tag).toBe("SessionPrincipal")
      if (active.principal._tag !== "SessionPrincipal") return
      expect(active.principal.user.id).toBe(opened.session.user_id)
      expect(active.principal.memberships.map((m) => m.personal)).toEqual([true])
      expect(active.csrfToken).toBe(opened.csrfToken)
      yield* TestClock.adjust(Duration.seconds(59))
      yield* resolve(opened.secret)
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* refusal(resolve(opened.secret))).toMatch(/ended or is unknown/)
      // found ended, and removed: it is not there even for an earlier clock
      expect(Option.isNone(yield* (yield* WebSessionRepository).findLive("digest(pws_1)", at(0)))).toBe(true)
    })))

  it("closes a session at once; another session of the same user lives on", () =>
    run(Effect.gen(function*() {
      const first = yield* open("alice")
      const second = yield* open("alice")
      expect(second.csrfToken).not.toBe(first.csrfToken)
      const sessions = yield* WebSessions
      expect(yield* sessions.close(first.secret)).toBe(true)
      expect(yield* sessions.close(first.secret)).toBe(false)
      expect(yield* refusal(resolve(first.secret))).toMatch(/ended or is unknown/)
      expect((yield* resolve(second.secret)).session.user_id).toBe(first.session.user_id)
    })))

  it("refuses secrets it never made", () =>
    run(Effect.gen(function*() {
      expect(yield* refusal(resolve(Redacted.make("pod_1")))).toMatch(/ended or is unknown/)
      expect(yield* refusal(resolve(Redacted.make("pws_9")))).toMatch(/ended or is unknown/)
    })))

  it("removes every session that has ended whenever one opens", () =>
    run(Effect.gen(function*() {
      yield* open("alice-brief")
      yield* open("bob")
      yield* TestClock.adjust(Duration.seconds(61))
      yield* open("alice")
      const repository = yield* WebSessionRepository
      // pws_1 ended and was removed by the last open: found neither now nor for an earlier clock
      expect(Option.isNone(yield* repository.findLive("digest(pws_1)", at(0)))).toBe(true)
      expect(Option.isSome(yield* repository.findLive("digest(pws_2)", at(61)))).toBe(true)
      expect(yield* repository.removeEnded(at(61))).toBe(0)
    })))
})
