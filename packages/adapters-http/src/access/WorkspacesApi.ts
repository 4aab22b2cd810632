import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { WorkspaceId } from "@podium/domain/shared"
import { Role } from "@podium/domain/access"
import { Forbidden } from "../api/Errors.ts"
import { CursorPage, cursorQuery, Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

export const WorkspaceView = Schema.Struct({
  business_id: WorkspaceId.annotate({ description: "The workspace's id, as `business_id` elsewhere" }),
  name: Schema.String,
  role: Role.annotate({ description: "The caller's role in the workspace" }),
  personal: Schema.Boolean.annotate({ description: "Whether this is the caller's personal workspace (the default one)" }),
  joined_at: Timestamp
}).annotate({ identifier: "Workspace" })
export type WorkspaceView = typeof WorkspaceView.Type

export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .add(
    HttpApiEndpoint.get("list", "/api/workspaces", {
      query: cursorQuery(WorkspaceId),
      success: CursorPage(WorkspaceView, WorkspaceId),
      error: Forbidden
    }).annotateMerge(OpenApi.annotations({
      summary: "The workspaces the signed-in user belongs to",
      description: "For a workspace switcher: each workspace the session's user is a member of, with its name, the " +
        "user's role (owner, admin or member) and whether it is their personal workspace, ordered by id. Pass a " +
        "workspace's `business_id` to other routes to act in it. `limit` 1–100 (default 20); `cursor` is the " +
        "previous page's `next_cursor`. Signed-in sessions only: an API token is refused 401."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Workspaces",
    description: "The workspaces the signed-in user belongs to, with their role in each: pass one's `business_id` to " +
      "act in it."
  }))
{}
