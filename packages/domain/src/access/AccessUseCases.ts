import { Layer } from "effect"
import { ApiTokens } from "./ApiTokens.ts"
import { Authentication } from "./Authentication.ts"
import { Identity } from "./Identity.ts"
import { Members } from "./Members.ts"
import { WebSessions } from "./WebSessions.ts"
import { Workspaces } from "./Workspaces.ts"

/** The access context wired: its use cases over its ports (workspaces, tokens, invites, sessions and web sessions, the mailer's queue). */
export const AccessUseCases = {
  layer: Layer.mergeAll(
    Layer.mergeAll(Authentication.layer, WebSessions.layer).pipe(Layer.provide(Identity.layer)),
    ApiTokens.layer,
    Members.layer,
    Workspaces.layer
  )
}
