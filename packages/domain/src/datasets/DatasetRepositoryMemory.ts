import { Bytes, Data, Effect, Layer, Option, Ref, Stream } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import { type DatasetState, DatasetVersion, emptyState } from "./Dataset.ts"
import { type AppendResult, DatasetRepository, type RowToStore } from "./DatasetRepository.ts"
import type { EventUsage, Periods } from "./EventLimits.ts"

interface StoredRow {
  readonly id: string
  readonly clientId: string | null
  /** The row as pushed: its download line. */
  readonly json: string
  /** What `dedupe` compares, as the Postgres adapter does: the text input (else `messages` as stored) and the reference. */
  readonly dedupeKey: string
  readonly version: number | null
  readonly dropped: boolean
}

interface StoredVersion {
  readonly version: DatasetVersion
  /** Rows kept by this version and the earlier ones, before the newest-N floor. */
  readonly totalRows: number
  /** The oldest row the version holds (newest N), or null when it holds them all. */
  readonly floorId: string | null
}

interface Dataset {
  readonly state: DatasetState
  readonly rows: ReadonlyArray<StoredRow>
  /** Oldest first. */
  readonly versions: ReadonlyArray<StoredVersion>
}

type Tables = ReadonlyMap<LeaderboardId, Dataset>

const emptyDataset: Dataset = { state: emptyState, rows: [], versions: [] }

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

/** Arrival order: row ids are time-ordered, and Postgres orders them the same way. */
const byId = (a: StoredRow, b: StoredRow) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const dedupeKeyOf = (row: RowToStore) =>
  JSON.stringify([row.input ?? JSON.stringify((JSON.parse(row.json) as { messages?: unknown }).messages), row.reference])

/** A period never moves backwards: a push stamped in an older period counts in the stored, newer one. */
const usedIn = (state: DatasetState, periods: Periods): EventUsage => ({
  daily: state.day !== null && state.day >= periods.day ? state.day_used : 0,
  monthly: state.month !== null && state.month >= periods.month ? state.month_used : 0
})

const later = (stored: string | null, pushed: string) => stored !== null && stored > pushed ? stored : pushed

/** A version's rows in arrival order: consolidated into it or before, not dropped, from its floor on. */
const versionRows = (dataset: Dataset, version: number) => {
  const found = dataset.versions.find((v) => v.version.version === version)
  if (found === undefined) return []
  const floor = found.floorId
  return dataset.rows
    .filter((r) => r.version !== null && r.version <= version && !r.dropped && (floor === null || r.id >= floor))
    .sort(byId)
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/** The Postgres adapter's semantics over an in-process map (labels aside): for tests. */
const layer = Layer.effect(
  DatasetRepository,
  Effect.gen(function*() {
    const ref = yield* Ref.make<Tables>(new Map())

    // Each operation yields first, as a round trip to the database would, so that concurrent use
    // cases interleave here as they do against Postgres; each write is atomic, as its transaction is.
    const read = <A>(f: (tables: Tables) => A) => Effect.andThen(Effect.yieldNow, Effect.map(Ref.get(ref), f))
    const write = <A>(f: (tables: Tables) => readonly [A, Tables] | ConstraintViolated) =>
      Effect.andThen(
        Effect.yieldNow,
        Ref.modify(ref, (tables): readonly [A | ConstraintViolated, Tables] => {
          const out = f(tables)
          return out instanceof ConstraintViolated ? [out, tables] : out
        })
      ).pipe(Effect.flatMap((a) => a instanceof ConstraintViolated ? Effect.die(a) : Effect.succeed(a)))

    const datasetOf = (tables: Tables, leaderboardId: LeaderboardId) => tables.get(leaderboardId) ?? emptyDataset
    const withDataset = (tables: Tables, leaderboardId: LeaderboardId, dataset: Dataset): Tables =>
      new Map(tables).set(leaderboardId, dataset)

    const append = (input: Parameters<DatasetRepository["Service"]["append"]>[0]) =>
      write((tables) => {
        const dataset = datasetOf(tables, input.leaderboardId)
        const ids = new Set(dataset.rows.map((r) => r.id))
        const clientIds = new Set(dataset.rows.flatMap((r) => r.clientId === null ? [] : [r.clientId]))
        const used = usedIn(dataset.state, input.periods)
        let room = input.allowance === undefined ? Number.POSITIVE_INFINITY : input.allowance(used)
        const stored: Array<number> = []
        const retried: Array<number> = []
        const overLimit: Array<number> = []
        const added: Array<StoredRow> = []
        for (const row of input.rows) {
          if (row.clientId !== null && clientIds.has(row.clientId)) {
            retried.push(row.index)
            continue
          }
          if (room <= 0) {
            overLimit.push(row.index)
            continue
          }
          if (ids.has(row.id)) return new ConstraintViolated({ constraint: "dataset_rows_pkey" })
          room--
          ids.add(row.id)
          if (row.clientId !== null) clientIds.add(row.clientId)
          stored.push(row.index)
          added.push({ id: row.id, clientId: row.clientId, json: row.json, dedupeKey: dedupeKeyOf(row), version: null, dropped: false })
        }
        const n = stored.length
        const before = dataset.state
        const state: DatasetState = {
          ...before,
          pending: before.pending + n,
          pending_since: before.pending === 0 && n > 0 ? input.now : before.pending_since,
          day: later(before.day, input.periods.day),
          day_used: used.daily + n,
          month: later(before.month, input.periods.month),
          month_used: used.monthly + n
        }
        const result: AppendResult = { stored, retried, overLimit, state }
        return [result, withDataset(tables, input.leaderboardId, { ...dataset, state, rows: [...dataset.rows, ...added] })]
      })

    const consolidate = (input: Parameters<DatasetRepository["Service"]["consolidate"]>[0]) =>
      write((tables): readonly [Option.Option<DatasetVersion>, Tables] => {
        const dataset = datasetOf(tables, input.leaderboardId)
        const pending = dataset.rows.filter((r) => r.version === null).sort(byId)
        if (pending.length === 0) return [Option.none(), tables]
        const previous = dataset.versions.at(-1)
        const version = (previous?.version.version ?? 0) + 1
        // dedupe: against the rows the previous version holds, and the earlier rows of this batch
        const seen = new Set(
          previous === undefined ? [] : versionRows(dataset, previous.version.version).map((r) => r.dedupeKey)
        )
        const marked = new Map(pending.map((row) => {
          const dropped = input.dedupe && seen.has(row.dedupeKey)
          seen.add(row.dedupeKey)
          return [row.id, { ...row, version, dropped }] as const
        }))
        const rows = dataset.rows.map((r) => marked.get(r.id) ?? r)
        const dropped = [...marked.values()].filter((r) => r.dropped).length
        const total = (previous?.totalRows ?? 0) + marked.size - dropped
        // newest N: the version starts at the N-th newest row kept so far
        const floorId = input.newest !== null && total > input.newest
          ? rows.filter((r) => r.version !== null && !r.dropped).sort(byId).at(-input.newest)?.id ?? null
          : null
        const created = new DatasetVersion({
          version,
          row_count: input.newest === null ? total : Math.min(total, input.newest),
          added_rows: marked.size - dropped,
          dropped_duplicates: dropped,
          labelled_rows: 0,
          trigger: input.trigger,
          sha256: null,
          created_at: input.now
        })
        const left = dataset.state.pending - marked.size
        const state: DatasetState = {
          ...dataset.state,
          pending: left,
          latest_version: version,
          last_consolidated_at: input.now,
          pending_since: left > 0 ? input.now : null
        }
        const versions = [...dataset.versions, { version: created, totalRows: total, floorId }]
        return [Option.some(created), withDataset(tables, input.leaderboardId, { state, rows, versions })]
      })

    const download = (leaderboardId: LeaderboardId, version: number): Stream.Stream<Uint8Array> =>
      Stream.unwrap(read((tables) =>
        Stream.encodeText(Stream.fromIterable(versionRows(datasetOf(tables, leaderboardId), version).map((r) => `${r.json}\n`)))
      ))

    // SHA-256 from the runtime's Web Crypto: the domain imports only `effect`, whose own digest
    // (`effect/crypto`) is a platform module that runs on this same `crypto.subtle`.
    const hash = (leaderboardId: LeaderboardId, version: number) =>
      Effect.gen(function*() {
        const bytes = Bytes.concat(yield* Stream.runCollect(download(leaderboardId, version)))
        const sha256 = hex(new Uint8Array(yield* Effect.promise(() => crypto.subtle.digest("SHA-256", bytes))))
        yield* write((tables) => {
          const dataset = datasetOf(tables, leaderboardId)
          const versions = dataset.versions.map((v) =>
            v.version.version === version ? { ...v, version: new DatasetVersion({ ...v.version, sha256 }) } : v
          )
          return [undefined, tables.has(leaderboardId) ? withDataset(tables, leaderboardId, { ...dataset, versions }) : tables]
        })
        return sha256
      })

    return DatasetRepository.of({
      append,
      state: (leaderboardId) => read((tables) => datasetOf(tables, leaderboardId).state),
      versions: (leaderboardId) => read((tables) => datasetOf(tables, leaderboardId).versions.map((v) => v.version).reverse()),
      snapshot: (leaderboardId) =>
        read((tables) => {
          const dataset = datasetOf(tables, leaderboardId)
          return { state: dataset.state, versions: dataset.versions.map((v) => v.version).reverse() }
        }),
      consolidate,
      download,
      hash,
      unhashed: read((tables) =>
        [...tables].flatMap(([leaderboardId, dataset]) =>
          dataset.versions.flatMap((v) =>
            v.version.sha256 === null ? [{ leaderboardId, version: v.version.version }] : []
          )
        ).slice(0, 100)
      ),
      pending: read((tables) =>
        [...tables].flatMap(([leaderboardId, dataset]) =>
          dataset.state.pending > 0 ? [{ leaderboardId, state: dataset.state }] : []
        )
      )
    })
  })
)

export const DatasetRepositoryMemory = { layer }
