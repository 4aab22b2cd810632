import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Email, InviteId, UserId, WorkspaceId } from "@podium/domain/shared"
import { InviteRole, InviteStatus, MailStatus, Role } from "@podium/domain/access"
import { Forbidden, NotFound } from "../api/Errors.ts"
import { AlreadyMember, InviteNotPending, OwnerCannotBeRemoved } from "./AccessErrors.ts"
import { NullableTimestamp, Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

export const MemberView = Schema.Struct({
  user_id: UserId,
  email: Schema.NullOr(Schema.String),
  role: Role,
  joined_at: Timestamp
}).annotate({ identifier: "Member" })
export type MemberView = typeof MemberView.Type

export const InviteView = Schema.Struct({
  id: InviteId,
  business_id: WorkspaceId,
  email: Schema.String,
  role: InviteRole,
  status: InviteStatus,
  invited_by: Schema.NullOr(UserId),
  redirect_to: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: NullableTimestamp,
  mail: Schema.Struct({
    status: MailStatus.annotate({
      description: "`queued` until delivered (retried with backoff), `sent`, `logged` when the server has no " +
        "SMTP_URL (the mail, accept link included, went to the server's log, not to the invitee: pass the link on), " +
        "`failed` after the last attempt, or `skipped` when the invite stopped being pending first"
    }),
    attempts: Schema.Int,
    last_error: Schema.NullOr(Schema.String),
    sent_at: NullableTimestamp
  })
}).annotate({ identifier: "Invite" })
export type InviteView = typeof InviteView.Type

const HttpUrl = Schema.String.check(
  Schema.isMaxLength(2048),
  Schema.isPattern(/^https?:\/\/[^\s]+$/, { message: "Expected an http(s) URL" })
)

export const InviteRequest = Schema.Struct({
  email: Email,
  role: Schema.optionalKey(InviteRole),
  business_id: Schema.optionalKey(WorkspaceId),
  redirect_to: Schema.optionalKey(HttpUrl)
})

export const RemoveRequest = Schema.Struct({
  business_id: WorkspaceId,
  user_id: Schema.optionalKey(UserId),
  invite_id: Schema.optionalKey(InviteId)
})

export class InvitesApi extends HttpApiGroup.make("invites")
  .add(
    HttpApiEndpoint.get("list", "/api/invite-user", {
      query: { business_id: Schema.optionalKey(WorkspaceId) },
      success: Schema.Struct({
        business_id: WorkspaceId,
        members: Schema.Array(MemberView),
        invites: Schema.Array(InviteView)
      }),
      error: Forbidden
    }).annotate(OpenApi.Summary, "List members and pending invites"),
    HttpApiEndpoint.post("invite", "/api/invite-user", {
      payload: InviteRequest,
      success: Schema.Struct({
        invite: InviteView,
        accept_url: Schema.String
      }),
      error: [Forbidden, AlreadyMember]
    }).annotate(OpenApi.Summary, "Invite a member by email").annotateMerge(OpenApi.annotations({
      description: "Invites an email as member (default) or admin. Inviting the same email again refreshes the " +
        "pending invite. The invite is accepted on the invitee's first signed-in request with that email once " +
        "verified (the session says `email_verified: true`; until then their calls to the workspace are 403 saying so); it expires after 7 days. The mail is delivered by a durable job (retried with backoff, across restarts); " +
        "`invite.mail` reports its progress. 409 `already_member` when the email already belongs to a member."
    })),
    HttpApiEndpoint.delete("remove", "/api/invite-user", {
      payload: RemoveRequest,
      success: Schema.Struct({
        business_id: WorkspaceId,
        removed: Schema.Literals(["member", "invite"]),
        user_id: Schema.optionalKey(UserId),
        invite_id: Schema.optionalKey(InviteId)
      }),
      error: [Forbidden, NotFound, OwnerCannotBeRemoved, InviteNotPending]
    }).annotate(OpenApi.Summary, "Remove a member or revoke an invite").annotateMerge(OpenApi.annotations({
      description: "Removes a member (`user_id`) or revokes a pending invite (`invite_id`); give exactly one. " +
        "The owner cannot be removed (409 `owner_cannot_be_removed`)."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Members and Invites",
    description: "A workspace's members and pending invites: owners and admins invite by email, remove members and " +
      "revoke invites."
  }))
{}
