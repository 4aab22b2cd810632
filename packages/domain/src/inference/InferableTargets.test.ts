import { DateTime, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { ApiToken, InsufficientScope, Principal, type Scope } from "../access/index.ts"
import { NotFound, TokenId, WorkspaceId } from "../shared/index.ts"
import { uuid } from "../testing/index.ts"
import { callableKinds, InferableTargets } from "./InferableTargets.ts"
import { type InferableTarget, InferableTargetsRepository } from "./InferableTargetsRepository.ts"

const workspace = WorkspaceId.make(uuid(100))
const target = (kind: InferableTarget["kind"], n: number): InferableTarget => ({
  kind,
  id: uuid(n),
  workspace_id: workspace,
  created_at: DateTime.makeUnsafe(n * 1000)
})
const stored = { leaderboard: [target("leaderboard", 1), target("leaderboard", 2)], model: [target("model", 3)] }

const tokenWith = (scopes: ReadonlyArray<Scope>) =>
  Principal.ApiTokenPrincipal({
    token: new ApiToken({
      id: TokenId.make(uuid(7)),
      workspace_id: workspace,
      name: "t",
      display_prefix: "pod_abcd",
      scopes,
      expires_at: null,
      budget_limit: null,
      budget_reset_interval: null,
      created_by: null,
      created_at: DateTime.makeUnsafe(0),
      last_used_at: null,
      revoked_at: null
    })
  })

/** Runs `f` against a repository holding `stored` for `workspace`, answering the reads it made. */
const run = async <A, E>(f: (targets: InferableTargets["Service"]) => Effect.Effect<A, E>) => {
  const reads: Array<string> = []
  const repository = Layer.succeed(InferableTargetsRepository, InferableTargetsRepository.of({
    leaderboards: (id) => Effect.sync(() => (reads.push(`leaderboards ${id}`), id === workspace ? stored.leaderboard : [])),
    models: (id) => Effect.sync(() => (reads.push(`models ${id}`), id === workspace ? stored.model : []))
  }))
  const exit = await Effect.runPromiseExit(
    Effect.flatMap(Effect.service(InferableTargets), f).pipe(Effect.provide(InferableTargets.layer.pipe(Layer.provide(repository))))
  )
  return { exit, reads }
}

describe("callableKinds", () => {
  it("follows an API token's inference scopes; a push token calls nothing", () => {
    expect(callableKinds(tokenWith(["leaderboards:inference"]))).toEqual(["leaderboard"])
    expect(callableKinds(tokenWith(["models:inference", "leaderboards:read"]))).toEqual(["model"])
    expect(callableKinds(tokenWith(["models:inference", "leaderboards:inference"]))).toEqual(["leaderboard", "model"])
    expect(callableKinds(tokenWith(["leaderboards:read", "models:read", "leaderboards:run"]))).toEqual([])
    expect(callableKinds(Principal.PushTokenPrincipal({ pushTokenId: "p", workspaceId: workspace, leaderboardId: uuid(1) })))
      .toEqual([])
  })
})

describe("InferableTargets", () => {
  it("lists each kind the token may call with one read per kind, leaderboards first", async () => {
    const both = await run((t) => t.list(tokenWith(["models:inference", "leaderboards:inference"])))
    expect(both.exit).toEqual(Exit.succeed([...stored.leaderboard, ...stored.model]))
    expect(both.reads).toEqual([`leaderboards ${workspace}`, `models ${workspace}`])
    const models = await run((t) => t.list(tokenWith(["models:inference"])))
    expect(models.exit).toEqual(Exit.succeed(stored.model))
    expect(models.reads).toEqual([`models ${workspace}`])
  })

  it("gets a listed target (its UUID in either case), else NotFound; a kind the token may not call is InsufficientScope", async () => {
    const token = tokenWith(["leaderboards:inference"])
    expect((await run((t) => t.get(token, "leaderboard", uuid(2).toUpperCase()))).exit).toEqual(Exit.succeed(stored.leaderboard[1]))
    const unknown = await run((t) => Effect.flip(t.get(token, "leaderboard", uuid(3))))
    expect(unknown.exit).toEqual(Exit.succeed(new NotFound({ resource: "leaderboard", id: uuid(3) })))
    const model = await run((t) => Effect.flip(t.get(token, "model", uuid(3))))
    expect(model.exit).toEqual(Exit.succeed(new InsufficientScope({ required_scope: "models:inference" })))
    expect(model.reads).toEqual([])
  })
})
