import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, startPodium } from "./support/Podium.ts"
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
let owner: string
let workspace: string
let smtpUrl: string

beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`
  podium = await startPodium({ SMTP_URL: smtpUrl, PUBLIC_BASE_URL: "https://podium.example.com" })
  owner = await session("inv-owner")
  workspace = (await podium.request("GET", "/api/invite-user", { token: owner })).body.business_id
})
afterAll(async () => {
  await podium.stop()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
})

const invite = (json: Record<string, unknown>, token = owner) => podium.request("POST", "/api/invite-user", { token, json })
const list = (token = owner, businessId = workspace) =>
  podium.request("GET", `/api/invite-user?business_id=${businessId}`, { token })

/** The mail state of a pending invite, as the list shows it. */
const mailOf = async (inviteId: string, via: Podium = podium) => {
  const listed = await via.request("GET", `/api/invite-user?business_id=${workspace}`, { token: owner })
  return listed.body.invites.find((i: { id: string }) => i.id === inviteId)?.mail
}
const decode = (raw: string) =>
  raw.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)))

describe("inviting", () => {
  it("creates a pending invite, delivers the accept link by mail and lists it", async () => {
    const reply = await invite({ email: "New.Person@Example.com", business_id: workspace })
    expect(reply.status).toBe(200)
    expect(reply.body.invite).toMatchObject({
      email: "new.person@example.com",
      role: "member",
      status: "pending",
      business_id: workspace,
      accepted_at: null,
      mail: { status: "queued", attempts: 0, last_error: null, sent_at: null }
    })
    const link = new URL(reply.body.accept_url)
    expect(link.origin).toBe("https://podium.example.com")
    expect(link.searchParams.get("invite_id")).toBe(reply.body.invite.id)
    const expires = Date.parse(reply.body.invite.expires_at) - Date.parse(reply.body.invite.created_at)
    expect(expires).toBe(7 * 86_400_000)

    await expect.poll(() => mailOf(reply.body.invite.id), { timeout: 15_000 }).toMatchObject({ status: "sent", attempts: 1 })
    const mail = mails.filter((m) => m.to.includes("new.person@example.com"))
    expect(mail).toHaveLength(1)
    expect(decode(mail[0]!.raw)).toContain("invite_id=" + reply.body.invite.id)
    expect(decode(mail[0]!.raw)).toContain("as member")

    const listed = await list()
    expect(listed.body.invites.map((i: { id: string }) => i.id)).toContain(reply.body.invite.id)
  })

  it("inviting the same email again refreshes the one pending invite", async () => {
    const first = await invite({ email: "twice@example.com" })
    const second = await invite({ email: "TWICE@example.com", role: "admin", redirect_to: "https://app.example.com/join" })
    expect(second.body.invite.id).toBe(first.body.invite.id)
    expect(second.body.invite.role).toBe("admin")
    expect(second.body.accept_url.startsWith("https://app.example.com/join?")).toBe(true)
    const pending = (await list()).body.invites.filter((i: { email: string }) => i.email === "twice@example.com")
    expect(pending).toHaveLength(1)
  })

  it("validates email, role and redirect", async () => {
    for (const json of [{ email: "not-an-email" }, { email: "a@b.co", role: "owner" }, { email: "a@b.co", redirect_to: "javascript:alert(1)" }, {}]) {
      const reply = await invite(json)
      expect(reply.status, JSON.stringify(json)).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
  })

  it("the invitee becomes a member on first sign-in with that email", async () => {
    const sent = await invite({ email: "joiner@example.com", role: "admin" })
    const joiner = await session("inv-joiner", { email: "Joiner@Example.com" })
    const theirs = await podium.request("GET", `/api/invite-user?business_id=${workspace}`, { token: joiner })
    expect(theirs.status).toBe(200) // admin of the inviting workspace now
    const member = theirs.body.members.find((m: { email: string }) => m.email === "Joiner@Example.com")
    expect(member.role).toBe("admin")
    expect(theirs.body.invites.map((i: { id: string }) => i.id)).not.toContain(sent.body.invite.id)
    const stored = await query(podium.databaseUrl, (sql) => sql`SELECT status FROM invites WHERE id = ${sent.body.invite.id}`)
    expect(stored[0]).toEqual({ status: "accepted" })
    const again = await invite({ email: "joiner@example.com" })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("already_member")
  })

  it("an unverified email does not accept an invite", async () => {
    await invite({ email: "unverified@example.com" })
    const user = await session("inv-unverified", { email: "unverified@example.com", emailVerified: false })
    const reply = await podium.request("GET", `/api/invite-user?business_id=${workspace}`, { token: user })
    expect(reply.status).toBe(403)
  })

  it("an expired invite is not accepted and the schedule marks it expired", async () => {
    const sent = await invite({ email: "late@example.com" })
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = ${sent.body.invite.id}`)
    const late = await session("inv-late", { email: "late@example.com" })
    expect((await podium.request("GET", `/api/invite-user?business_id=${workspace}`, { token: late })).status).toBe(403)
    expect((await list()).body.invites.map((i: { id: string }) => i.id)).not.toContain(sent.body.invite.id)
  })
})

describe("durable mail delivery", () => {
  it("retries a refused mail with backoff until it is delivered", async () => {
    refuse.set("busy@example.com", 2)
    const sent = await invite({ email: "busy@example.com" })
    await expect.poll(() => mailOf(sent.body.invite.id), { timeout: 20_000, interval: 250 }).toMatchObject({
      status: "sent",
      attempts: 3,
      last_error: null
    })
    expect(mails.filter((m) => m.to.includes("busy@example.com"))).toHaveLength(1)
  })

  it("does not mail an invite that was revoked before delivery", async () => {
    refuse.set("changed-mind@example.com", 1)
    const sent = await invite({ email: "changed-mind@example.com" })
    await expect.poll(() => mailOf(sent.body.invite.id), { timeout: 10_000, interval: 100 }).toMatchObject({
      status: "queued",
      attempts: 1
    })
    await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, invite_id: sent.body.invite.id }
    })
    await expect.poll(async () => {
      const rows = await query(podium.databaseUrl, (sql) =>
        sql`SELECT mail_status FROM invites WHERE id = ${sent.body.invite.id}`)
      return rows[0]?.["mail_status"]
    }, { timeout: 15_000, interval: 250 }).toBe("skipped")
    expect(mails.filter((m) => m.to.includes("changed-mind@example.com"))).toHaveLength(0)
  })

  it("a delivery interrupted by a restart is finished by the next instance", async () => {
    refuse.set("restart@example.com", 1)
    const sent = await invite({ email: "restart@example.com" })
    await expect.poll(() => mailOf(sent.body.invite.id), { timeout: 10_000, interval: 100 }).toMatchObject({ attempts: 1 })
    await podium.stop() // waiting out its backoff
    podium = await startPodium({ DATABASE_URL: podium.databaseUrl, SMTP_URL: smtpUrl, PUBLIC_BASE_URL: "https://podium.example.com" })
    await expect.poll(() => mailOf(sent.body.invite.id), { timeout: 20_000, interval: 250 }).toMatchObject({
      status: "sent",
      attempts: 2
    })
    expect(mails.filter((m) => m.to.includes("restart@example.com"))).toHaveLength(1)
  })
})

describe("removing", () => {
  it("revokes a pending invite, once", async () => {
    const sent = await invite({ email: "revoke-me@example.com" })
    const removed = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, invite_id: sent.body.invite.id }
    })
    expect(removed.status).toBe(200)
    expect(removed.body).toEqual({ business_id: workspace, removed: "invite", invite_id: sent.body.invite.id })
    const again = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, invite_id: sent.body.invite.id }
    })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("invite_not_pending")
    const late = await session("inv-revoked", { email: "revoke-me@example.com" })
    expect((await podium.request("GET", `/api/invite-user?business_id=${workspace}`, { token: late })).status).toBe(403)
  })

  it("removes a member, who then loses access; the owner cannot be removed", async () => {
    await invite({ email: "leaver@example.com" })
    const leaver = await session("inv-leaver", { email: "leaver@example.com" })
    const members = (await podium.request("GET", "/api/invite-user", { token: leaver })).body
    expect(members.business_id).not.toBe(workspace) // their own personal workspace stays the default
    const all = (await list()).body.members
    const leaverId = all.find((m: { email: string }) => m.email === "leaver@example.com").user_id
    const ownerId = all.find((m: { role: string }) => m.role === "owner").user_id

    const removed = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, user_id: leaverId }
    })
    expect(removed.body).toEqual({ business_id: workspace, removed: "member", user_id: leaverId })
    expect((await list(leaver)).status).toBe(403)

    const ownerRemoval = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, user_id: ownerId }
    })
    expect(ownerRemoval.status).toBe(409)
    expect(ownerRemoval.body.error.code).toBe("owner_cannot_be_removed")
  })

  it("needs exactly one of user_id and invite_id, and a business_id", async () => {
    const both = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, user_id: "0190a000-0000-7000-8000-000000000000", invite_id: "0190a000-0000-7000-8000-000000000001" }
    })
    expect(both.status).toBe(400)
    const neither = await podium.request("DELETE", "/api/invite-user", { token: owner, json: { business_id: workspace } })
    expect(neither.status).toBe(400)
    const noBusiness = await podium.request("DELETE", "/api/invite-user", { token: owner, json: {} })
    expect(noBusiness.status).toBe(400)
    expect(noBusiness.body.error.details.issues[0].path).toEqual(["payload", "business_id"])
    const unknown = await podium.request("DELETE", "/api/invite-user", {
      token: owner,
      json: { business_id: workspace, user_id: "0190a000-0000-7000-8000-000000000000" }
    })
    expect(unknown.status).toBe(404)
  })
})

describe("roles and workspaces", () => {
  it("a member cannot list, invite or remove", async () => {
    await invite({ email: "plain@example.com" })
    const plain = await session("inv-plain", { email: "plain@example.com" })
    expect((await list(plain)).status).toBe(403)
    const reply = await invite({ email: "friend@example.com", business_id: workspace }, plain)
    expect(reply.status).toBe(403)
    expect(reply.body.error.code).toBe("forbidden")
    const removal = await podium.request("DELETE", "/api/invite-user", {
      token: plain,
      json: { business_id: workspace, invite_id: "0190a000-0000-7000-8000-000000000001" }
    })
    expect(removal.status).toBe(403)
  })

  it("an outsider gets 403 for the workspace and 404 for its invites from their own", async () => {
    const sent = await invite({ email: "target@example.com" })
    const outsider = await session("inv-outsider")
    expect((await list(outsider)).status).toBe(403)
    const ownWorkspace = (await podium.request("GET", "/api/invite-user", { token: outsider })).body.business_id
    const removal = await podium.request("DELETE", "/api/invite-user", {
      token: outsider,
      json: { business_id: ownWorkspace, invite_id: sent.body.invite.id }
    })
    expect(removal.status).toBe(404)
  })
})
