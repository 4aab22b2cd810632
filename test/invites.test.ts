import { DateTime } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InviteId, UserId, type WorkspaceId } from "@podium/domain/shared"
import type { InviteRequest, RemoveRequest } from "@podium/adapters-http/access/InvitesApi"
import { type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, session, type SessionOptions, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

const mails: Array<{ to: ReadonlyArray<string>; raw: string }> = []
/** Recipients whose next N deliveries the fake SMTP server refuses (a temporary failure). */
const refuse = new Map<string, number>()
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  logger: false,
  onRcptTo(address, _session, callback) {
    const left = refuse.get(address.address) ?? 0
    if (left > 0) {
      refuse.set(address.address, left - 1)
      return callback(Object.assign(new Error("mailbox busy, try later"), { responseCode: 451 }))
    }
    callback()
  },
  onData(stream, envelope, callback) {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => {
      mails.push({ to: envelope.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") })
      callback()
    })
  }
})

let podium: Podium
let ownerSession: string
let owner: Caller
let workspace: WorkspaceId
let smtpUrl: string

const startWithMail = (env: Record<string, string> = {}) =>
  startPodium({ SMTP_URL: smtpUrl, PUBLIC_BASE_URL: "https://podium.example.com", ...env })

beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`
  podium = await startWithMail()
  ownerSession = await session("inv-owner")
  owner = client(podium, ownerSession)
  workspace = (await owner((c) => c.invites.list({ query: {} }))).business_id
})
afterAll(async () => {
  await podium.stop()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

type Invite = typeof InviteRequest.Type
type Removal = typeof RemoveRequest.Type

const invite = (payload: Invite, api = owner) => api((c) => c.invites.invite({ payload }))
const list = (api = owner, business_id = workspace) => api((c) => c.invites.list({ query: { business_id } }))
const remove = (payload: Omit<Removal, "business_id">, api = owner, business_id = workspace) =>
  api((c) => c.invites.remove({ payload: { business_id, ...payload } }))
/** A user signed in with a session (its email as `options` say), not yet having made a request. */
const user = async (subject: string, options?: SessionOptions) => client(podium, await session(subject, options))
/** The mail state of a pending invite, as the list shows it. */
const mailOf = async (inviteId: InviteId) => (await list()).invites.find((i) => i.id === inviteId)?.mail
const someUser = UserId.make("0190a000-0000-7000-8000-000000000000")
const someInvite = InviteId.make("0190a000-0000-7000-8000-000000000001")
const decode = (raw: string) =>
  raw.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)))

describe("inviting", () => {
  it("creates a pending invite, delivers the accept link by mail and lists it", async () => {
    const reply = await invite({ email: "New.Person@Example.com", business_id: workspace })
    expect(reply.invite).toMatchObject({
      email: "new.person@example.com",
      role: "member",
      status: "pending",
      business_id: workspace,
      accepted_at: null,
      mail: { status: "queued", attempts: 0, last_error: null, sent_at: null }
    })
    const link = new URL(reply.accept_url)
    expect(link.origin).toBe("https://podium.example.com")
    expect(link.searchParams.get("invite_id")).toBe(reply.invite.id)
    const expires = DateTime.toEpochMillis(reply.invite.expires_at) - DateTime.toEpochMillis(reply.invite.created_at)
    expect(expires).toBe(7 * 86_400_000)

    await expect.poll(() => mailOf(reply.invite.id), { timeout: 15_000 }).toMatchObject({ status: "sent", attempts: 1 })
    const mail = mails.filter((m) => m.to.includes("new.person@example.com"))
    expect(mail).toHaveLength(1)
    expect(decode(mail[0]!.raw)).toContain("invite_id=" + reply.invite.id)
    expect(decode(mail[0]!.raw)).toContain("as member")

    expect((await list()).invites.map((i) => i.id)).toContain(reply.invite.id)
  })

  it("inviting the same email again refreshes the one pending invite", async () => {
    const first = await invite({ email: "twice@example.com" })
    const second = await invite({ email: "TWICE@example.com", role: "admin", redirect_to: "https://app.example.com/join" })
    expect(second.invite.id).toBe(first.invite.id)
    expect(second.invite.role).toBe("admin")
    expect(second.accept_url.startsWith("https://app.example.com/join?")).toBe(true)
    const pending = (await list()).invites.filter((i) => i.email === "twice@example.com")
    expect(pending).toHaveLength(1)
  })

  it("validates email, role and redirect", async () => {
    // Payloads the contract forbids, which the typed client will not send.
    for (const json of [{ email: "not-an-email" }, { email: "a@b.co", role: "owner" }, { email: "a@b.co", redirect_to: "javascript:alert(1)" }, {}]) {
      const reply = unchecked(podium, "POST", "/api/invite-user", { token: ownerSession, json })
      await expectError(reply, 400, "validation_failed", JSON.stringify(json))
    }
  })

  it("the invitee becomes a member on first sign-in with that email", async () => {
    const sent = await invite({ email: "joiner@example.com", role: "admin" })
    const joiner = await user("inv-joiner", { email: "Joiner@Example.com" })
    const theirs = await list(joiner) // admin of the inviting workspace now
    const member = theirs.members.find((m) => m.email === "Joiner@Example.com")
    expect(member?.role).toBe("admin")
    expect(theirs.invites.map((i) => i.id)).not.toContain(sent.invite.id)
    const stored = await query(podium.databaseUrl, (sql) => sql`SELECT status FROM invites WHERE id = ${sent.invite.id}`)
    expect(stored[0]).toEqual({ status: "accepted" })
    await expectError(invite({ email: "joiner@example.com" }), 409, "already_member")
  })

  it("an unverified email does not accept an invite", async () => {
    await invite({ email: "unverified@example.com" })
    const unverified = await user("inv-unverified", { email: "unverified@example.com", emailVerified: false })
    await expectError(list(unverified), 403, "forbidden")
  })

  it("an expired invite is not accepted and the schedule marks it expired", async () => {
    const sent = await invite({ email: "late@example.com" })
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = ${sent.invite.id}`)
    const late = await user("inv-late", { email: "late@example.com" })
    await expectError(list(late), 403, "forbidden")
    expect((await list()).invites.map((i) => i.id)).not.toContain(sent.invite.id)
  })
})

describe("durable mail delivery", () => {
  it("retries a refused mail with backoff until it is delivered", async () => {
    refuse.set("busy@example.com", 2)
    const sent = await invite({ email: "busy@example.com" })
    await expect.poll(() => mailOf(sent.invite.id), { timeout: 20_000, interval: 250 }).toMatchObject({
      status: "sent",
      attempts: 3,
      last_error: null
    })
    expect(mails.filter((m) => m.to.includes("busy@example.com"))).toHaveLength(1)
  })

  it("does not mail an invite that was revoked before delivery", async () => {
    refuse.set("changed-mind@example.com", 1)
    const sent = await invite({ email: "changed-mind@example.com" })
    await expect.poll(() => mailOf(sent.invite.id), { timeout: 10_000, interval: 100 }).toMatchObject({
      status: "queued",
      attempts: 1
    })
    await remove({ invite_id: sent.invite.id })
    await expect.poll(async () => {
      const rows = await query(podium.databaseUrl, (sql) =>
        sql`SELECT mail_status FROM invites WHERE id = ${sent.invite.id}`)
      return rows[0]?.["mail_status"]
    }, { timeout: 15_000, interval: 250 }).toBe("skipped")
    expect(mails.filter((m) => m.to.includes("changed-mind@example.com"))).toHaveLength(0)
  })

  it("a delivery interrupted by a restart is finished by the next instance", async () => {
    refuse.set("restart@example.com", 1)
    const sent = await invite({ email: "restart@example.com" })
    await expect.poll(() => mailOf(sent.invite.id), { timeout: 10_000, interval: 100 }).toMatchObject({ attempts: 1 })
    await podium.stop() // waiting out its backoff
    podium = await startWithMail({ DATABASE_URL: podium.databaseUrl })
    owner = client(podium, ownerSession)
    await expect.poll(() => mailOf(sent.invite.id), { timeout: 20_000, interval: 250 }).toMatchObject({
      status: "sent",
      attempts: 2
    })
    expect(mails.filter((m) => m.to.includes("restart@example.com"))).toHaveLength(1)
  })
})

describe("removing", () => {
  it("revokes a pending invite, once", async () => {
    const sent = await invite({ email: "revoke-me@example.com" })
    const removed = await remove({ invite_id: sent.invite.id })
    expect(removed).toEqual({ business_id: workspace, removed: "invite", invite_id: sent.invite.id })
    await expectError(remove({ invite_id: sent.invite.id }), 409, "invite_not_pending")
    const late = await user("inv-revoked", { email: "revoke-me@example.com" })
    await expectError(list(late), 403, "forbidden")
  })

  it("removes a member, who then loses access; the owner cannot be removed", async () => {
    await invite({ email: "leaver@example.com" })
    const leaver = await user("inv-leaver", { email: "leaver@example.com" })
    const members = await leaver((c) => c.invites.list({ query: {} }))
    expect(members.business_id).not.toBe(workspace) // their own personal workspace stays the default
    const all = (await list()).members
    const leaverId = all.find((m) => m.email === "leaver@example.com")!.user_id
    const ownerId = all.find((m) => m.role === "owner")!.user_id

    expect(await remove({ user_id: leaverId })).toEqual({ business_id: workspace, removed: "member", user_id: leaverId })
    await expectError(list(leaver), 403, "forbidden")

    await expectError(remove({ user_id: ownerId }), 409, "owner_cannot_be_removed")
  })

  it("needs exactly one of user_id and invite_id, and a business_id", async () => {
    await expectError(remove({ user_id: someUser, invite_id: someInvite }), 400, "validation_failed", "both")
    await expectError(remove({}), 400, "validation_failed", "neither")
    // Without business_id, which the contract requires.
    const noBusiness = unchecked(podium, "DELETE", "/api/invite-user", { token: ownerSession, json: {} })
    await expectValidation(noBusiness, ["payload", "business_id"])
    await expectError(remove({ user_id: someUser }), 404, "not_found", "unknown user")
  })
})

describe("roles and workspaces", () => {
  it("a member cannot list, invite or remove", async () => {
    await invite({ email: "plain@example.com" })
    const plain = await user("inv-plain", { email: "plain@example.com" })
    await expectError(list(plain), 403, "forbidden", "list")
    await expectError(invite({ email: "friend@example.com", business_id: workspace }, plain), 403, "forbidden", "invite")
    await expectError(remove({ invite_id: someInvite }, plain), 403, "forbidden", "remove")
  })

  it("an outsider gets 403 for the workspace and 404 for its invites from their own", async () => {
    const sent = await invite({ email: "target@example.com" })
    const outsider = await user("inv-outsider")
    await expectError(list(outsider), 403, "forbidden")
    const ownWorkspace = (await outsider((c) => c.invites.list({ query: {} }))).business_id
    await expectError(remove({ invite_id: sent.invite.id }, outsider, ownWorkspace), 404, "not_found")
  })
})
