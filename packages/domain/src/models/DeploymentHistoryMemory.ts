import { Data, DateTime, Effect, Layer, Ref } from "effect"
import { storableJson, storableText } from "../shared/index.ts"
import { DeploymentHistory, DeploymentHistoryEntry } from "./DeploymentHistory.ts"

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

/** A jsonb column: its text made storable, and only what JSON keeps. */
const json = <A>(value: A): A => JSON.parse(JSON.stringify(storableJson(value)))

const newestFirst = (a: DeploymentHistoryEntry, b: DeploymentHistoryEntry) =>
  DateTime.toEpochMillis(b.at) - DateTime.toEpochMillis(a.at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const gateRun = (entry: DeploymentHistoryEntry) =>
  entry.kind === "gate" && entry.actor.type === "system" ? entry.actor.fine_tune_run_id : undefined

/**
 * The deployment history in memory, with the Postgres adapter's semantics (entries are only
 * appended; a run's gate is recorded once). Nothing refers to a model table, so any model id is taken.
 */
const layer = Layer.effect(
  DeploymentHistory,
  Effect.gen(function*() {
    const entries = yield* Ref.make<ReadonlyArray<DeploymentHistoryEntry>>([])
    return DeploymentHistory.of({
      append: (entry) =>
        Effect.andThen(
          Effect.yieldNow,
          Effect.flatMap(Ref.get(entries), (current) => {
            if (current.some((e) => e.id === entry.id)) {
              return Effect.die(new ConstraintViolated({ constraint: "model_deployment_history_pkey" }))
            }
            const run = gateRun(entry)
            if (run !== undefined && current.some((e) => gateRun(e) === run)) return Effect.succeed(false)
            const stored = new DeploymentHistoryEntry({
              ...entry,
              evidence: entry.evidence === null ? null : json(entry.evidence),
              reason: entry.reason === null ? null : storableText(entry.reason)
            })
            return Effect.as(Ref.set(entries, [...current, stored]), true)
          })
        ),
      list: (modelId, page) =>
        Effect.andThen(
          Effect.yieldNow,
          Effect.map(Ref.get(entries), (current) => {
            const mine = current.filter((e) => e.model_id === modelId).sort(newestFirst)
            let start = 0
            if (page.cursor !== undefined) {
              const at = mine.findIndex((e) => e.id === page.cursor)
              if (at === -1) return { entries: [], next_cursor: null }
              start = at + 1
            }
            const slice = mine.slice(start, start + page.limit)
            const more = start + page.limit < mine.length
            return { entries: slice, next_cursor: more && slice.length > 0 ? slice[slice.length - 1]!.id : null }
          })
        )
    })
  })
)

/** DeploymentHistory in memory, for tests. */
export const DeploymentHistoryMemory = { layer }
