import { type Mail, MailFailed, Mailer } from "@podium/domain/access"
import { Effect, Layer, Redacted } from "effect"
import { createTransport } from "nodemailer"
import addressparser from "nodemailer/lib/addressparser"

export interface MailerSmtpOptions {
  /** `smtp://user:pass@host:587` or `smtps://...`; nodemailer's URL options apply. */
  readonly url: Redacted.Redacted<string>
  readonly from: string
}

/** Sends through one SMTP server; the transport closes with the layer. */
export const MailerSmtp = {
  layer: (options: MailerSmtpOptions): Layer.Layer<Mailer> =>
    Layer.effect(
      Mailer,
      Effect.gen(function*() {
        const transport = yield* Effect.acquireRelease(
          Effect.sync(() =>
            createTransport({
              url: Redacted.value(options.url),
              connectionTimeout: 10_000,
              greetingTimeout: 10_000,
              socketTimeout: 30_000
            })
          ),
          (transport) => Effect.sync(() => transport.close())
        )
        const secrets = credentialsOf(options.url)
        const reasonOf = (error: unknown) =>
          secrets.reduce((text, secret) => text.split(secret).join("[redacted]"), String(error))

        const send = Effect.fn("MailerSmtp.send")(function*(mail: Mail) {
          if (!isSingleAddress(mail.to)) {
            return yield* new MailFailed({ reason: "the recipient is not a single e-mail address" })
          }
          yield* Effect.tryPromise({
            try: () =>
              transport.sendMail({
                from: options.from,
                to: mail.to,
                subject: mail.subject,
                text: mail.text
              }),
            catch: (error) => new MailFailed({ reason: reasonOf(error) })
          })
          return "sent" as const
        })

        return Mailer.of({ send })
      })
    )
}

const credentialsOf = (url: Redacted.Redacted<string>): ReadonlyArray<string> => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null) return []
  return [parsed.password, safeDecode(parsed.password), Redacted.value(url)].filter((_) => _ !== "")
}

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** nodemailer would read "a@x, b@y" as two recipients; the port sends to one. */
const isSingleAddress = (to: string) => {
  const parsed = addressparser(to)
  return parsed.length === 1 && parsed[0]!.address === to
}
