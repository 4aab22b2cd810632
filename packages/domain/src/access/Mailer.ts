import { Context, type Effect, Schema } from "effect"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

/**
 * What became of a mail a mailer took: `sent` to a mail server, or `logged` (written to the log
 * instead: no mail server is configured, so nobody received it).
 */
export const Delivered = Schema.Literals(["sent", "logged"])
export type Delivered = typeof Delivered.Type

export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  reason: Schema.String
}) {}

/** Sends one plain-text mail. Implementations must not log message bodies that hold links with secrets. */
export class Mailer extends Context.Service<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<Delivered, MailFailed>
}>()("@podium/domain/access/Mailer") {}
