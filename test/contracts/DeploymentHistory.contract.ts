import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import {
  DeploymentEntryId,
  DeploymentHistory,
  DeploymentHistoryEntry,
  ModelId,
  ModelRepository,
  newModel
} from "@podium/domain/models"
import { FineTuneRunId, ModelVersionId, UserId, type WorkspaceId } from "@podium/domain/shared"
import { DateTime, Effect, Exit, type Layer } from "effect"
import { SqlClient } from "effect/sql"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-27T10:00:00.123Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })
const uuid = () => crypto.randomUUID() as string

type Ports = DeploymentHistory | ModelRepository | WorkspaceRepository

const aModel = Effect.gen(function*() {
  const { workspaceId } = yield* aUser()
  const model = newModel({ id: ModelId.make(uuid()), workspace_id: workspaceId, name: "history", created_at: t0 })
  yield* (yield* ModelRepository).insert(model)
  return model
})

const anEntry = (
  workspaceId: WorkspaceId,
  modelId: ModelId,
  fields: Partial<DeploymentHistoryEntry> = {}
) =>
  new DeploymentHistoryEntry({
    id: DeploymentEntryId.make(uuid()),
    workspace_id: workspaceId,
    model_id: modelId,
    at: t0,
    kind: "deploy",
    from_version_id: null,
    to_version_id: ModelVersionId.make(uuid()),
    actor: { type: "user", id: UserId.make(uuid()) },
    evidence: null,
    reason: null,
    ...fields
  })

const plain = (entry: DeploymentHistoryEntry) => ({ ...entry })

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `DeploymentHistory` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const deploymentHistoryContract = (name: string, makeLayer: () => Layer.Layer<Ports, unknown>) =>
  describe(`DeploymentHistory contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("entries come back as given, newest first (the later id first at one instant), paged by cursor", () =>
        Effect.gen(function*() {
          const history = yield* DeploymentHistory
          const model = yield* aModel
          const other = yield* aModel
          const run = FineTuneRunId.make(uuid())
          const v1 = ModelVersionId.make(uuid())
          const entries = [
            anEntry(model.workspace_id, model.id, { at: at(1), to_version_id: v1, evidence: { deployment: { max_workers: 4 } } }),
            anEntry(model.workspace_id, model.id, {
              at: at(2),
              kind: "gate",
              from_version_id: v1,
              to_version_id: null,
              actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: run },
              evidence: { decision: "keep", candidate_score: 0.5, deployed_score: 0.75 },
              reason: "the new version scores lower than the deployed one"
            }),
            anEntry(model.workspace_id, model.id, { at: at(3), kind: "stop", from_version_id: v1, to_version_id: null }),
            anEntry(model.workspace_id, model.id, { at: at(3), kind: "rollback", from_version_id: v1 })
          ]
          // appended out of order: the order is the entries' own
          for (const entry of [entries[3]!, entries[0]!, entries[2]!, entries[1]!]) assert.isTrue(yield* history.append(entry))
          yield* history.append(anEntry(other.workspace_id, other.id, { at: at(5) }))

          const byId = (a: DeploymentHistoryEntry, b: DeploymentHistoryEntry) => a.id < b.id ? 1 : -1
          const expected = [...[entries[2]!, entries[3]!].sort(byId), entries[1]!, entries[0]!]
          const all = yield* history.list(model.id, { limit: 10 })
          assert.deepStrictEqual(all.entries.map(plain), expected.map(plain))
          assert.isNull(all.next_cursor)

          const first = yield* history.list(model.id, { limit: 3 })
          assert.deepStrictEqual(first.entries.map((e) => e.id), expected.slice(0, 3).map((e) => e.id))
          assert.strictEqual(first.next_cursor, expected[2]!.id)
          const second = yield* history.list(model.id, { limit: 3, cursor: first.next_cursor! })
          assert.deepStrictEqual(second.entries.map((e) => e.id), [expected[3]!.id])
          assert.isNull(second.next_cursor)
          // exactly a page's worth left: no next page
          const exact = yield* history.list(model.id, { limit: 2, cursor: expected[1]!.id })
          assert.deepStrictEqual(exact.entries.map((e) => e.id), expected.slice(2).map((e) => e.id))
          assert.isNull(exact.next_cursor)
          // a cursor of another model's entry, or of none, gives an empty page
          const foreign = (yield* history.list(other.id, { limit: 1 })).entries[0]!.id
          assert.deepStrictEqual((yield* history.list(model.id, { limit: 3, cursor: foreign })).entries, [])
          assert.deepStrictEqual((yield* history.list(model.id, { limit: 3, cursor: DeploymentEntryId.make(uuid()) })).entries, [])
          assert.deepStrictEqual((yield* history.list(ModelId.make(uuid()), { limit: 3 })).entries, [])
        }))

      it.effect("a run's gate is recorded once; appending an id twice dies", () =>
        Effect.gen(function*() {
          const history = yield* DeploymentHistory
          const model = yield* aModel
          const run = FineTuneRunId.make(uuid())
          const gate = (minutes: number) =>
            anEntry(model.workspace_id, model.id, {
              at: at(minutes),
              kind: "gate",
              actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: run },
              evidence: { decision: "deploy" }
            })
          const first = gate(1)
          assert.isTrue(yield* history.append(first))
          assert.isFalse(yield* history.append(gate(2)))
          // another run's gate is its own
          assert.isTrue(yield* history.append(anEntry(model.workspace_id, model.id, {
            at: at(3),
            kind: "gate",
            actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: FineTuneRunId.make(uuid()) }
          })))
          const twice = yield* Effect.exit(history.append(anEntry(model.workspace_id, model.id, { id: first.id, at: at(4) })))
          assert.isTrue(Exit.hasDies(twice))
          const listed = (yield* history.list(model.id, { limit: 10 })).entries
          assert.strictEqual(listed.length, 2)
          assert.deepStrictEqual(plain(listed[1]!), plain(first))
        }))
    })
  })

/** What only Postgres enforces: a stored entry is never changed or deleted while its model's row exists. */
export const deploymentHistoryPostgresContract = (makeLayer: () => Layer.Layer<Ports | SqlClient.SqlClient, unknown>) =>
  describe("DeploymentHistory contract: Postgres only", () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("UPDATE and DELETE of an entry are refused; the workspace's deletion takes the entries with it", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const history = yield* DeploymentHistory
          const model = yield* aModel
          const entry = anEntry(model.workspace_id, model.id, { reason: "first" })
          yield* history.append(entry)
          const update = yield* Effect.exit(sql`UPDATE model_deployment_history SET reason = 'rewritten' WHERE id = ${entry.id}`)
          assert.isTrue(Exit.isFailure(update))
          assert.include(String(Exit.isFailure(update) ? update.cause : ""), "immutable")
          const remove = yield* Effect.exit(sql`DELETE FROM model_deployment_history WHERE id = ${entry.id}`)
          assert.isTrue(Exit.isFailure(remove))
          assert.include(String(Exit.isFailure(remove) ? remove.cause : ""), "never deleted")
          // soft deletion keeps the history
          yield* (yield* ModelRepository).softDelete(model.id, at(10))
          assert.deepStrictEqual((yield* history.list(model.id, { limit: 10 })).entries.map(plain), [plain(entry)])
          assert.isTrue(Exit.isFailure(yield* Effect.exit(sql`DELETE FROM model_deployment_history WHERE id = ${entry.id}`)))
          yield* sql`DELETE FROM workspaces WHERE id = ${model.workspace_id}`
          const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM model_deployment_history WHERE model_id = ${model.id}`
          assert.strictEqual(left!.n, 0)
        }))
    })
  })
