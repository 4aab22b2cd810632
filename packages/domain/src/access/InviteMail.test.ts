import { DateTime, Duration, Effect, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { InviteId, Links, WorkspaceId } from "../shared/index.ts"
import { create, type Invite, revoke } from "./Invite.ts"
import { afterAttempt, attempt, backoff, compose, type Delivery, maxAttempts, worthSending } from "./InviteMail.ts"
import { InviteRepository } from "./InviteRepository.ts"
import { InviteRepositoryMemory } from "./InviteRepositoryMemory.ts"
import { type Mail, MailFailed, Mailer } from "./Mailer.ts"
import { WorkspaceRepositoryMemory } from "./WorkspaceRepositoryMemory.ts"

const t0 = DateTime.makeUnsafe("2026-11-21T10:00:00.000Z")
const input = {
  id: InviteId.make("0190a000-0000-7000-8000-000000000001"),
  workspaceId: WorkspaceId.make("0190a000-0000-7000-8000-000000000002"),
  email: "a@example.com",
  role: "admin" as const,
  invitedBy: null,
  redirectTo: null,
  now: t0
}
const invite = create(input)


describe("invite mail delivery policy", () => {
  it("backs off 2 s, 4 s, 8 s ... up to 10 minutes", () => {
    expect([1, 2, 3].map((n) => Duration.toSeconds(backoff(n)))).toEqual([2, 4, 8])
    expect(Duration.toMinutes(backoff(20))).toBe(10)
    fc.assert(fc.property(fc.integer({ min: 1, max: 60 }), (n) => {
      expect(Duration.toMillis(backoff(n + 1))).toBeGreaterThanOrEqual(Duration.toMillis(backoff(n)))
      expect(Duration.toMinutes(backoff(n))).toBeLessThanOrEqual(10)
    }))
  })

  it("a failure stays queued until the last attempt, then fails; a success is sent", () => {
    expect(afterAttempt(1, { _tag: "Failed", reason: "busy" })).toEqual({ status: "queued", lastError: "busy" })
    expect(afterAttempt(maxAttempts, { _tag: "Failed", reason: "busy" })).toEqual({ status: "failed", lastError: "busy" })
    expect(afterAttempt(maxAttempts, { _tag: "Delivered", status: "sent" })).toEqual({ status: "sent", lastError: null })
    expect(afterAttempt(1, { _tag: "Delivered", status: "logged" })).toEqual({ status: "logged", lastError: null })
  })

  it("sends only while the invite can be accepted and was not sent yet", () => {
    expect(worthSending(invite, t0)).toBe(true)
    expect(worthSending(invite, DateTime.add(t0, { days: 8 }))).toBe(false)
    expect(worthSending(Result.getOrThrow(revoke(invite, t0)), t0)).toBe(false)
    expect(worthSending({ ...invite, mail_status: "sent" }, t0)).toBe(false)
    expect(worthSending({ ...invite, mail_status: "logged" }, t0)).toBe(false)
  })

  it("the mail names the role, the link and the expiry", () => {
    const mail = compose(invite, "https://podium.example.com/?invite_id=x")
    expect(mail.to).toBe("a@example.com")
    expect(mail.text).toContain("as admin")
    expect(mail.text).toContain("https://podium.example.com/?invite_id=x")
    expect(mail.text).toContain("2026-11-28T10:00:00.000Z")
  })
})

/** Attempts over the memory repository and a test clock at t0; the mailer fails its first `failures` sends. */
const deliver = <A>(failures: number, body: (sent: ReadonlyArray<Mail>) => Effect.Effect<A, never, InviteRepository | Links | Mailer | TestClock.TestClock>) => {
  const sent: Array<Mail> = []
  let sends = 0
  const mailer = Layer.succeed(Mailer, Mailer.of({
    send: (mail) =>
      Effect.suspend(() =>
        ++sends <= failures ? Effect.fail(new MailFailed({ reason: `refused ${sends}` })) : Effect.sync(() => sent.push(mail)).pipe(Effect.as("sent" as const))
      )
  }))
  const links = Layer.succeed(Links, Links.of({ inviteAcceptUrl: (i) => `https://podium.test/?invite_id=${i.id}`, tracesUrl: () => "", datasetPushUrl: () => "", modelVersionInferenceUrl: () => "" }))
  const layer = Layer.mergeAll(InviteRepositoryMemory.layer.pipe(Layer.provide(WorkspaceRepositoryMemory.layer)), mailer, links, TestClock.layer())
  return Effect.runPromise(Effect.provide(Effect.andThen(TestClock.setTime(DateTime.toEpochMillis(t0)), body(sent)), layer))
}

const deliveryOf = (i: Invite): Delivery => ({ workspace_id: i.workspace_id, invite_id: i.id, expires_at: DateTime.formatIso(i.expires_at) })

const stored = (i: Invite) =>
  Effect.flatMap(InviteRepository, (r) => Effect.map(r.find(i.workspace_id, i.id), Option.getOrThrow))

const saved = Effect.flatMap(InviteRepository, (r) => r.upsertPending(invite))

describe("invite mail attempts", () => {
  it("sends the mail once and records when; a later attempt of the same delivery sends nothing", () =>
    deliver(0, (sent) =>
      Effect.gen(function*() {
        yield* saved
        yield* TestClock.adjust("1 minute")
        expect(yield* attempt(deliveryOf(invite), 1)).toBe("sent")
        expect(sent).toEqual([compose(invite, `https://podium.test/?invite_id=${invite.id}`)])
        expect(yield* stored(invite)).toMatchObject({
          mail_status: "sent",
          mail_attempts: 1,
          mail_last_error: null,
          mail_sent_at: DateTime.add(t0, { minutes: 1 })
        })
        expect(yield* attempt(deliveryOf(invite), 2)).toBe("sent")
        expect(sent).toHaveLength(1)
      })))

  it("asks for a retry after each failure and fails at the last attempt, keeping the reason", () =>
    deliver(maxAttempts, (sent) =>
      Effect.gen(function*() {
        yield* saved
        const results = []
        for (let n = 1; n <= maxAttempts; n++) results.push(yield* attempt(deliveryOf(invite), n))
        expect(results).toEqual([...Array(maxAttempts - 1).fill("retry"), "failed"])
        expect(yield* stored(invite)).toMatchObject({
          mail_status: "failed",
          mail_attempts: maxAttempts,
          mail_last_error: `refused ${maxAttempts}`
        })
        expect(sent).toEqual([])
      })))

  it("a retry that gets through is sent", () =>
    deliver(1, (sent) =>
      Effect.gen(function*() {
        yield* saved
        expect(yield* attempt(deliveryOf(invite), 1)).toBe("retry")
        expect(yield* stored(invite)).toMatchObject({ mail_status: "queued", mail_attempts: 1, mail_last_error: "refused 1" })
        expect(yield* attempt(deliveryOf(invite), 2)).toBe("sent")
        expect(sent).toHaveLength(1)
      })))

  it("skips without a word a delivery whose invite was refreshed or is gone: a newer delivery owns it", () =>
    deliver(0, (sent) =>
      Effect.gen(function*() {
        yield* saved
        yield* TestClock.adjust("1 hour")
        const refreshed = yield* Effect.flatMap(InviteRepository, (r) =>
          r.upsertPending(create({ ...input, id: InviteId.make(crypto.randomUUID()), now: DateTime.add(t0, { hours: 1 }) })))
        expect(yield* attempt(deliveryOf(invite), 1)).toBe("skipped")
        expect(yield* attempt({ ...deliveryOf(invite), invite_id: InviteId.make(crypto.randomUUID()) }, 1)).toBe("skipped")
        expect(yield* stored(refreshed)).toMatchObject({ mail_status: "queued", mail_attempts: 0 })
        expect(sent).toEqual([])
      })))

  it("skips and records it when the invite expired or was revoked first", () =>
    deliver(0, (sent) =>
      Effect.gen(function*() {
        const repository = yield* InviteRepository
        yield* saved
        yield* TestClock.adjust("8 days")
        expect(yield* attempt(deliveryOf(invite), 1)).toBe("skipped")
        expect(yield* stored(invite)).toMatchObject({ _tag: "Pending", mail_status: "skipped", mail_attempts: 0 })
        const other = create({ ...input, id: InviteId.make(crypto.randomUUID()), email: "b@example.com", now: yield* DateTime.now })
        yield* repository.upsertPending(other)
        yield* repository.settle(Result.getOrThrow(revoke(other, yield* DateTime.now)))
        expect(yield* attempt(deliveryOf(other), 1)).toBe("skipped")
        expect(yield* stored(other)).toMatchObject({ _tag: "Revoked", mail_status: "skipped" })
        expect(sent).toEqual([])
      })))
})
