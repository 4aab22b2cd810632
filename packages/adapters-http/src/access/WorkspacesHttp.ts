import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Workspaces } from "@podium/domain/access"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { WorkspaceView } from "./WorkspacesApi.ts"

export const WorkspacesHttp = HttpApiBuilder.group(
  Api,
  "workspaces",
  Effect.fn(function*(handlers) {
    const workspaces = yield* Workspaces
    return handlers.handle("list", ({ query }) =>
      Effect.gen(function*() {
        const page = yield* workspaces.list(yield* CurrentPrincipal, { cursor: query.cursor, limit: query.limit ?? 20 })
        return {
          data: page.workspaces.map((w) =>
            WorkspaceView.make({
              business_id: w.workspace_id,
              name: w.name,
              role: w.role,
              personal: w.personal,
              joined_at: w.joined_at
            })
          ),
          next_cursor: page.next_cursor
        }
      }).pipe(mapDomainErrors))
  })
)
