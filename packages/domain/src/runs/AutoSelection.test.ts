import { Effect, Exit, Layer, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { IntegrationRepository, type StoredIntegration } from "../integrations/index.ts"
import { Leaderboards } from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "../leaderboards/memory.ts"
import { IdGenerator, SecretCipher, type WorkspaceId } from "../shared/index.ts"
import { IdGeneratorInOrder, ModelDirectoryEmpty, uuid, workspaceOwner } from "../testing/index.ts"
import { AutoSelection } from "./AutoSelection.ts"
import { type CatalogueModel, RouterCatalogue } from "./RouterCatalogue.ts"

// The rules themselves (AutoSelect.ts) are tested in AutoSelect.test.ts.

const model = (id: string, prompt: number | null, completion: number | null, hf: string | null = null): CatalogueModel => ({
  id,
  name: `Model ${id}`,
  prompt_price: prompt,
  completion_price: completion,
  hugging_face_id: hf
})

// The use case over memory leaderboards, with the router and the integration store as fakes of their ports.
describe("AutoSelection", () => {
  const owner = workspaceOwner(1)
  const stranger = workspaceOwner(2)
  const catalogue = [
    model("acme/cheap", 0.000001, 0.000002, "acme/cheap-weights"),
    model("acme/cheaper", 0, 0.000001),
    model("acme/pricey", 0.00001, 0.00003),
    model("acme/free", 0, 0)
  ]
  const make = (options: { readonly integration: boolean; readonly ids?: Layer.Layer<IdGenerator> }) => {
    const calls: Array<string> = []
    const integration: StoredIntegration = {
      workspace_id: owner.memberships[0]!.workspace_id,
      provider: "router",
      sealed_token: "sealed:router-key",
      key_hint: null,
      label: null,
      details: {},
      validated_by: null,
      validated_at: owner.memberships[0]!.joined_at
    }
    const ports = Layer.mergeAll(
      LeaderboardRepositoryMemory.layer,
      ServingHistoryMemory.layer,
      options.ids ?? IdGeneratorInOrder.layer,
      Layer.succeed(SecretCipher, {
        seal: (plain) => Effect.succeed(`sealed:${Redacted.value(plain)}`),
        open: (sealed) => Effect.succeed(Redacted.make(sealed.replace(/^sealed:/, "")))
      }),
      Layer.succeed(IntegrationRepository, {
        save: () => Effect.void,
        find: (workspaceId: WorkspaceId, provider) =>
          Effect.succeed(options.integration && workspaceId === integration.workspace_id && provider === "router"
            ? Option.some(integration)
            : Option.none()),
        list: () => Effect.succeed([]),
        remove: () => Effect.succeed(false)
      }),
      Layer.succeed(RouterCatalogue, {
        models: (token) => Effect.sync(() => (calls.push(`models ${Redacted.value(token)}`), catalogue)),
        latency: (id, token) => Effect.sync(() => (calls.push(`latency ${id} ${Redacted.value(token)}`), []))
      })
    )
    const layer = AutoSelection.layer.pipe(Layer.provideMerge(Leaderboards.layer), Layer.provide(ports), Layer.provide(ModelDirectoryEmpty.layer))
    return { calls, run: <A, E>(effect: Effect.Effect<A, E, AutoSelection | Leaderboards>) => Effect.runPromise(Effect.provide(effect, layer)) }
  }

  const newLeaderboard = Leaderboards.use((l) => l.create(owner, { name: "lb", dataset_type: "PUSH" }))

  it("adds the cheapest as Router candidates with catalogue prices, skipping models already candidates", async () => {
    const { calls, run } = make({ integration: true })
    const { candidates, result } = await run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const autoSelection = yield* AutoSelection
      const { id } = yield* newLeaderboard
      yield* leaderboards.addCandidate(owner, id, { name: "by hand", model_name: "acme/free" })
      const result = yield* autoSelection.select(owner, id, { number_of_models: 2 })
      return { result, candidates: (yield* leaderboards.get(owner, id)).candidates }
    }))
    expect(calls).toEqual(["models router-key"])
    expect(result.added.map((c) => [c.platform, c.name, c.model_name, c.input_price_per_m_tokens, c.output_price_per_m_tokens]))
      .toEqual([["Router", "Model acme/cheaper", "acme/cheaper", 0, 1], ["Router", "Model acme/cheap", "acme/cheap", 1, 2]])
    expect(result).toMatchObject({
      considered: 4,
      rejected_by: { unstorable_text: 0, already_candidate: 1, open_source: 0, cost: 0, latency: 0, over_limit: 1 }
    })
    expect(candidates.map((c) => c.model_name)).toEqual(["acme/free", "acme/cheaper", "acme/cheap"])
  })

  it("adds its candidates all or none: a second insert that fails leaves none of them", async () => {
    // ids in order: the leaderboard, the candidate added by hand, then the first chosen; the second
    // chosen gets the by-hand candidate's id again, which the store refuses (its primary key)
    const ids = [uuid(1), uuid(2), uuid(3), uuid(2)]
    const { run } = make({
      integration: true,
      ids: Layer.succeed(IdGenerator, IdGenerator.fromUuids({
        next: Effect.sync(() => ids.shift()!),
        nextMany: (count) => Effect.sync(() => ids.splice(0, count))
      }))
    })
    const { candidates, exit } = await run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const { id } = yield* newLeaderboard
      yield* leaderboards.addCandidate(owner, id, { name: "by hand", model_name: "acme/free" })
      const exit = yield* Effect.exit((yield* AutoSelection).select(owner, id, { number_of_models: 2 }))
      return { exit, candidates: (yield* leaderboards.get(owner, id)).candidates }
    }))
    expect(Exit.hasDies(exit)).toBe(true)
    expect(candidates.map((c) => c.name)).toEqual(["by hand"])
  })

  it("without a router integration: RouterIntegrationMissing, and the router is not asked", async () => {
    const { calls, run } = make({ integration: false })
    const error = await run(Effect.gen(function*() {
      const { id } = yield* newLeaderboard
      return yield* Effect.flip((yield* AutoSelection).select(owner, id, {}))
    }))
    expect(error).toMatchObject({ _tag: "RouterIntegrationMissing", workspace_id: owner.memberships[0]!.workspace_id })
    expect(calls).toEqual([])
  })

  it("another workspace's leaderboard is not found; an archived one takes no candidates", async () => {
    const { calls, run } = make({ integration: true })
    const tags = await run(Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const autoSelection = yield* AutoSelection
      const { id } = yield* newLeaderboard
      const notFound = yield* Effect.flip(autoSelection.select(stranger, id, {}))
      yield* leaderboards.update(owner, id, { status: "archived", extra: {} })
      const archived = yield* Effect.flip(autoSelection.select(owner, id, {}))
      return [notFound._tag, archived._tag]
    }))
    expect(tags).toEqual(["NotFound", "LeaderboardArchived"])
    expect(calls).toEqual([])
  })

  it("an invalid request fails before anything is read", async () => {
    const { calls, run } = make({ integration: true })
    const error = await run(Effect.gen(function*() {
      const { id } = yield* newLeaderboard
      return yield* Effect.flip((yield* AutoSelection).select(owner, id, { number_of_models: 1 }))
    }))
    expect(error).toMatchObject({ _tag: "InvalidInput", path: ["number_of_models"] })
    expect(calls).toEqual([])
  })
})
