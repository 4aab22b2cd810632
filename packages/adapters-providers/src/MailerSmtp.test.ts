import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Mailer } from "@podium/domain/access"
import { Effect, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { MailerSmtp } from "./MailerSmtp.ts"

interface Received {
  readonly from: string | false
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

const received: Array<Received> = []
const logins: Array<{ username: string | undefined; password: string | null | undefined }> = []

const server = new SMTPServer({
  authOptional: true,
  allowInsecureAuth: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onAuth(auth, _session, callback) {
    logins.push({ username: auth.username, password: auth.password })
    if (auth.password === "wrong p@ss") return callback(new Error("Invalid username or password"))
    callback(null, { user: auth.username })
  },
  onRcptTo(address, _session, callback) {
    if (address.address.endsWith("@refused.test")) return callback(new Error("no such mailbox"))
    callback()
  },
  onData(stream, session, callback) {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => {
      received.push({
        from: session.envelope.mailFrom === false ? false : session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((_) => _.address),
        raw: Buffer.concat(chunks).toString("utf8")
      })
      callback()
    })
  }
})

let port: number

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.server.address() as AddressInfo).port
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const send = (url: string, mail: { to: string; subject: string; text: string }) =>
  Mailer.use((mailer) => mailer.send(mail)).pipe(
    Effect.provide(MailerSmtp.layer({ url: Redacted.make(url), from: "Podium <podium@example.test>" }))
  )

const headerLines = (raw: string) => raw.split("\r\n\r\n")[0]!.split("\r\n")

describe("MailerSmtp", () => {
  it.effect("delivers to the recipient with the subject and text", () =>
    Effect.gen(function*() {
      yield* send(`smtp://127.0.0.1:${port}`, {
        to: "ada@example.test",
        subject: "You are invited to Podium",
        text: "Accept: https://podium.example.test/invite?invite_id=abc"
      })
      const mail = received.at(-1)!
      assert.strictEqual(mail.from, "podium@example.test")
      assert.deepStrictEqual(mail.to, ["ada@example.test"])
      assert.include(headerLines(mail.raw), "Subject: You are invited to Podium")
      assert.include(headerLines(mail.raw), "To: ada@example.test")
      assert.include(headerLines(mail.raw), "From: Podium <podium@example.test>")
      assert.include(mail.raw, "Accept: https://podium.example.test/invite?invite_id=abc")
    }))

  it.effect("logs in with the credentials in the URL", () =>
    Effect.gen(function*() {
      yield* send(`smtp://mailer:s3cret%20pass@127.0.0.1:${port}`, { to: "ada@example.test", subject: "Hi", text: "Hello" })
      assert.deepStrictEqual(logins.at(-1), { username: "mailer", password: "s3cret pass" })
    }))

  it.effect("refuses a recipient that is not exactly one address", () =>
    Effect.gen(function*() {
      const before = received.length
      for (const to of ["ada@example.test, eve@example.test", "ada@example.test;eve@example.test", "Ada <ada@example.test>", ""]) {
        const error = yield* Effect.flip(send(`smtp://127.0.0.1:${port}`, { to, subject: "Hi", text: "Hello" }))
        assert.strictEqual(error._tag, "MailFailed", to)
      }
      assert.strictEqual(received.length, before)
    }))

  it.effect("keeps a line break in the subject from adding headers", () =>
    Effect.gen(function*() {
      yield* send(`smtp://127.0.0.1:${port}`, { to: "ada@example.test", subject: "Hi\r\nBcc: eve@example.test", text: "Hello" })
      const mail = received.at(-1)!
      assert.deepStrictEqual(mail.to, ["ada@example.test"])
      assert.isFalse(headerLines(mail.raw).some((line) => /^bcc:/i.test(line)), mail.raw)
    }))

  it.effect("fails with MailFailed when the server refuses, without leaking the password", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(send(`smtp://127.0.0.1:${port}`, { to: "nobody@refused.test", subject: "Hi", text: "x" }))
      assert.strictEqual(refused._tag, "MailFailed")
      assert.include(refused.reason, "no such mailbox")

      const badLogin = yield* Effect.flip(send(`smtp://mailer:wrong%20p%40ss@127.0.0.1:${port}`, { to: "ada@example.test", subject: "Hi", text: "x" }))
      assert.strictEqual(badLogin._tag, "MailFailed")
      assert.notInclude(badLogin.reason, "wrong p@ss")
      assert.notInclude(badLogin.reason, "wrong%20p%40ss")
    }))

  it.effect("fails with MailFailed when the server cannot be reached", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(send("smtp://mailer:hunter2@127.0.0.1:1", { to: "ada@example.test", subject: "Hi", text: "x" }))
      assert.strictEqual(error._tag, "MailFailed")
      assert.notInclude(error.reason, "hunter2")
    }))
})
