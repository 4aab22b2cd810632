import { assert, describe, it } from "@effect/vitest"
import { Mailer } from "@podium/domain/access"
import { Effect, Logger, References } from "effect"
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
  it.effect("logs the recipient and subject at info, the body only at debug", () =>
    Effect.gen(function*() {
      const { lines, layer } = capture()
      yield* Mailer.use((mailer) => mailer.send(mail)).pipe(
        Effect.provide([MailerLog.layer, layer]),
        Effect.provideService(References.MinimumLogLevel, "Debug")
      )
      assert.deepStrictEqual(lines, [
        { level: "Info", message: "mail to ada@example.test: You are invited" },
        { level: "Debug", message: mail.text }
      ])
    }))

  it.effect("keeps the body out of the log at the default level", () =>
    Effect.gen(function*() {
      const { lines, layer } = capture()
      yield* Mailer.use((mailer) => mailer.send(mail)).pipe(Effect.provide([MailerLog.layer, layer]))
      assert.isFalse(lines.some((line) => line.message.includes("invite_id")))
      assert.strictEqual(lines.length, 1)
    }))
})
