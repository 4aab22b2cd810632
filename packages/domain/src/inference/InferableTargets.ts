import { Context, Effect, Layer } from "effect"
import { type Forbidden, grants, InsufficientScope, type Principal, type Scope, workspaceOf } from "../access/index.ts"
import { NotFound, type WorkspaceId } from "../shared/index.ts"
import { type InferableTarget, InferableTargetsRepository, type TargetKind } from "./InferableTargetsRepository.ts"

/** The scope an API token needs to call a target of `kind`. */
export const inferenceScopeOf = (kind: TargetKind): Scope =>
  kind === "leaderboard" ? "leaderboards:inference" : "models:inference"

/**
 * The kinds a caller may call: an API token those its scopes grant (`leaderboards:inference`,
 * `models:inference`); a session both (sessions act with every scope); a push token none.
 */
export const callableKinds = (principal: Principal): ReadonlyArray<TargetKind> => {
  const kinds: ReadonlyArray<TargetKind> = ["leaderboard", "model"]
  switch (principal._tag) {
    case "SessionPrincipal":
      return kinds
    case "ApiTokenPrincipal":
      return kinds.filter((kind) => grants(principal.token.scopes, inferenceScopeOf(kind)))
    case "PushTokenPrincipal":
      return []
  }
}

/**
 * What the caller may run inference on, in its workspace (an API token's own, a session's selected
 * one): the OpenAI-compatible model list. A target another workspace owns, or that cannot be called
 * (archived, deleted, no active deployment), does not exist for the caller.
 */
export class InferableTargets extends Context.Service<InferableTargets, {
  /** Leaderboards first, then models, each oldest first; a kind the caller may not call is left out. */
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<InferableTarget>, Forbidden>
  /** One target; 403 InsufficientScope for a kind the token may not call, NotFound when it is not listed. */
  readonly get: (
    principal: Principal,
    kind: TargetKind,
    id: string
  ) => Effect.Effect<InferableTarget, NotFound | InsufficientScope | Forbidden>
}>()("@podium/domain/inference/InferableTargets") {
  static readonly layer = Layer.effect(
    InferableTargets,
    Effect.gen(function*() {
      const repository = yield* InferableTargetsRepository
      const read = (kind: TargetKind, workspaceId: WorkspaceId) =>
        kind === "leaderboard" ? repository.leaderboards(workspaceId) : repository.models(workspaceId)

      const list = Effect.fn("InferableTargets.list")(function*(principal: Principal) {
        const workspaceId = yield* workspaceOf(principal, undefined)
        const lists = yield* Effect.forEach(callableKinds(principal), (kind) => read(kind, workspaceId))
        return lists.flat()
      })

      const get = Effect.fn("InferableTargets.get")(function*(principal: Principal, kind: TargetKind, id: string) {
        if (!callableKinds(principal).includes(kind)) {
          return yield* new InsufficientScope({ required_scope: inferenceScopeOf(kind) })
        }
        const workspaceId = yield* workspaceOf(principal, undefined)
        // ids are stored (and listed) in lower case; a UUID may come in either
        const found = (yield* read(kind, workspaceId)).find((target) => target.id === id.toLowerCase())
        if (found === undefined) return yield* new NotFound({ resource: kind, id })
        return found
      })

      return { list, get }
    })
  )
}
