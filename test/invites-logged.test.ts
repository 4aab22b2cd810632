import { Layer, Logger, References } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

/**
 * Without SMTP_URL an invite mail is written to the log, link and all, and the invite says
 * `logged`, not `sent`, so nobody waits for a mail that never left.
 */
const logged: Array<string> = []
const capture = Layer.mergeAll(
  Logger.layer([Logger.make(({ message }) => {
    logged.push((Array.isArray(message) ? message : [message]).join(" "))
  })]),
  Layer.succeed(References.MinimumLogLevel, "Info")
)

let podium: Podium
beforeAll(async () => {
  podium = await startPodium({ PUBLIC_BASE_URL: "https://podium.example.com", SMTP_URL: undefined }, { logging: capture })
})
afterAll(() => podium?.stop())

describe("invites without SMTP", () => {
  it("logs the mail with its accept link, and the invite's mail status is logged", async () => {
    const owner = client(podium, await session("logged-owner"))
    const made = await owner((c) => c.invites.invite({ payload: { email: "no-smtp@example.com" } }))
    expect(made.invite.mail.status).toBe("queued")
    const mailOf = async () =>
      (await owner((c) => c.invites.list({ query: {} }))).invites.find((i) => i.id === made.invite.id)?.mail
    await expect.poll(mailOf, { timeout: 15_000, interval: 100 }).toMatchObject({ status: "logged", attempts: 1, last_error: null })
    const line = logged.find((l) => l.includes("mail to no-smtp@example.com"))
    expect(line).toContain("not sent: no SMTP_URL")
    expect(line).toContain(made.accept_url)
  })
})
