import { type Mail, Mailer } from "@podium/domain/access"
import { Effect, Layer } from "effect"

const send = Effect.fn("MailerLog.send")(function*(mail: Mail) {
  // the whole mail, so whoever reads the log can pass its link on: invite links carry ids, not
  // credentials (an invite is taken only by a sign-in with the invited, verified address)
  yield* Effect.logInfo(`mail to ${mail.to} (not sent: no SMTP_URL): ${mail.subject}\n\n${mail.text}`)
  return "logged" as const
})

/**
 * Writes mail to the log instead of sending it: for development and for deployments without SMTP.
 * It says `logged`, never `sent`: nobody received it.
 */
export const MailerLog = {
  layer: Layer.succeed(Mailer, Mailer.of({ send }))
}
