import { Context, Effect, Layer } from "effect"
import { Forbidden } from "./AuthErrors.ts"
import type { WorkspaceId } from "../shared/index.ts"
import type { Principal } from "./Principal.ts"
import { type MemberWorkspace, WorkspaceRepository } from "./WorkspaceRepository.ts"

export interface WorkspacePage {
  readonly workspaces: ReadonlyArray<MemberWorkspace>
  /** The last workspace's id while more follow, else null. */
  readonly next_cursor: WorkspaceId | null
}

/** The workspaces a signed-in user belongs to, for choosing which one to act in. */
export class Workspaces extends Context.Service<Workspaces, {
  /** A page of the session user's workspaces by id, after `cursor`; API and push tokens are refused. */
  readonly list: (
    principal: Principal,
    page: { readonly cursor: WorkspaceId | undefined; readonly limit: number }
  ) => Effect.Effect<WorkspacePage, Forbidden>
}>()("@podium/domain/access/Workspaces") {
  static readonly layer = Layer.effect(
    Workspaces,
    Effect.gen(function*() {
      const repository = yield* WorkspaceRepository

      const list = Effect.fn("Workspaces.list")(function*(
        principal: Principal,
        page: { readonly cursor: WorkspaceId | undefined; readonly limit: number }
      ) {
        if (principal._tag !== "SessionPrincipal") {
          return yield* new Forbidden({ message: "This operation needs a signed-in user session" })
        }
        // One more than asked tells whether another page follows.
        const found = yield* repository.workspacesOf(principal.user.id, { after: page.cursor, limit: page.limit + 1 })
        const workspaces = found.slice(0, page.limit)
        return {
          workspaces,
          next_cursor: found.length > page.limit ? (workspaces.at(-1)?.workspace_id ?? null) : null
        }
      })

      return Workspaces.of({ list })
    })
  )
}
