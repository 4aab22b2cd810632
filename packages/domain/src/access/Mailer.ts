import { Context, type Effect, Schema } from "effect"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  reason: Schema.String
}) {}

/** Sends one plain-text mail. Implementations must not log message bodies that hold links with secrets. */
export class Mailer extends Context.Service<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<void, MailFailed>
}>()("@podium/domain/access/Mailer") {}
