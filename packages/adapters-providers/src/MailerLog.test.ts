import { assert, describe, it } from "@effect/vitest"
import { Mailer } from "@podium/domain/access"
import { Effect, Logger } from "effect"
import { MailerLog } from "./MailerLog.ts"

const capture = () => {
  const lines: Array<{ level: string; message: string }> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push({ level: logLevel, message: (Array.isArray(message) ? message : [message]).join(" ") })
  })
  return { lines, layer: Logger.layer([logger]) }
}

const mail = { to: "ada@example.test", subject: "You are invited", text: "Accept: https://podium.test/invite?invite_id=abc" }

describe("MailerLog", () => {
  it.effect("logs the whole mail at the default level, its link included, saying it was not sent", () =>
    Effect.gen(function*() {
      const { lines, layer } = capture()
      const delivered = yield* Mailer.use((mailer) => mailer.send(mail)).pipe(Effect.provide([MailerLog.layer, layer]))
      assert.strictEqual(delivered, "logged")
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]!.level, "Info")
      assert.include(lines[0]!.message, "mail to ada@example.test (not sent: no SMTP_URL): You are invited")
      assert.include(lines[0]!.message, "https://podium.test/invite?invite_id=abc")
    }))
})
