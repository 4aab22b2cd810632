import { Data } from "effect"
import type { ApiToken } from "./ApiToken.ts"
import type { WorkspaceId } from "../shared/index.ts"
import type { Membership, User } from "./Workspace.ts"

/** Who is calling, as established by one credential. */
export type Principal = Data.TaggedEnum<{
  ApiTokenPrincipal: { readonly token: ApiToken }
  SessionPrincipal: {
    readonly user: User
    readonly memberships: ReadonlyArray<Membership>
    /** Whether the provider vouched for the user's email; invites to it wait until it does. */
    readonly emailVerified: boolean
  }
  PushTokenPrincipal: {
    readonly pushTokenId: string
    readonly workspaceId: WorkspaceId
    readonly leaderboardId: string
  }
}>

export const Principal = Data.taggedEnum<Principal>()
