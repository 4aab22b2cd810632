import { type Mail, Mailer } from "@podium/domain/access"
import { Effect, Layer } from "effect"

const send = Effect.fn("MailerLog.send")(function*(mail: Mail) {
  yield* Effect.logInfo(`mail to ${mail.to}: ${mail.subject}`)
  // invite links carry ids, not credentials; still, bodies stay out of the default log level
  yield* Effect.logDebug(mail.text)
})

/** Writes mail to the log instead of sending it: for development and for deployments without SMTP. */
export const MailerLog = {
  layer: Layer.succeed(Mailer, Mailer.of({ send }))
}
