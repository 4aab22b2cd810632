import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type Invite, Members, statusOf } from "@podium/domain/access"
import { Api } from "../api/Api.ts"
import { InviteView, MemberView } from "./InvitesApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const inviteView = (invite: Invite) =>
  InviteView.make({
    id: invite.id,
    business_id: invite.workspace_id,
    email: invite.email,
    role: invite.role,
    status: statusOf(invite),
    invited_by: invite.invited_by,
    redirect_to: invite.redirect_to,
    created_at: invite.created_at,
    expires_at: invite.expires_at,
    accepted_at: invite._tag === "Accepted" ? invite.accepted_at : null,
    mail: {
      status: invite.mail_status,
      attempts: invite.mail_attempts,
      last_error: invite.mail_last_error,
      sent_at: invite.mail_sent_at
    }
  })

export const InvitesHttp = HttpApiBuilder.group(
  Api,
  "invites",
  Effect.fn(function*(handlers) {
    const members = yield* Members
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const listed = yield* members.list(yield* CurrentPrincipal, query.business_id)
          return {
            business_id: listed.workspaceId,
            members: listed.members.map((m) => MemberView.make(m)),
            invites: listed.invites.map(inviteView)
          }
        }).pipe(mapDomainErrors))
      .handle("invite", ({ payload }) =>
        Effect.gen(function*() {
          const sent = yield* members.invite(yield* CurrentPrincipal, payload)
          return { invite: inviteView(sent.invite), accept_url: sent.acceptUrl }
        }).pipe(mapDomainErrors))
      .handle("remove", ({ payload }) =>
        Effect.gen(function*() {
          const removal = yield* members.remove(yield* CurrentPrincipal, payload)
          return removal._tag === "MemberRemoved"
            ? { business_id: removal.workspaceId, removed: "member" as const, user_id: removal.userId }
            : { business_id: removal.invite.workspace_id, removed: "invite" as const, invite_id: removal.invite.id }
        }).pipe(mapDomainErrors))
  })
)
