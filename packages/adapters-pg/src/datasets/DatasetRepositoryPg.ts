import { Effect, Layer, Option, Schema, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import {
  type AppendInput,
  type AppendResult,
  type ConsolidateInput,
  DatasetRepository,
  type DatasetState,
  DatasetVersion,
  emptyState,
  type EventUsage,
  type RowToStore
} from "@podium/domain/datasets"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

const StateRow = Schema.Struct({
  pending: Schema.Int,
  pending_since: NullableTimestamp,
  last_consolidated_at: NullableTimestamp,
  latest_version: Schema.NullOr(Schema.Int),
  day: Schema.NullOr(Schema.String),
  day_used: Schema.Int,
  month: Schema.NullOr(Schema.String),
  month_used: Schema.Int
})
const decodeState = Schema.decodeUnknownEffect(StateRow)

const VersionRow = Schema.Struct({ ...DatasetVersion.fields, created_at: Timestamp })
const decodeVersions = Schema.decodeUnknownEffect(Schema.Array(VersionRow))

/** One lock per leaderboard's dataset: consolidations (and label publications) take turns. */
export const lockKey = (leaderboardId: string) => `podium.dataset:${leaderboardId}`


/** JSONL lines per chunk of a download: large enough to amortise, small enough to stream. */
const linesPerChunk = 1000

/** Below every row id: where a version without a newest-N floor starts. */
const nilUuid = "00000000-0000-0000-0000-000000000000"

/**
 * Joins the rows' JSON in one parameter: U+001E (chr(30)), which JSON text never holds unescaped.
 * A few long parameters cost far less to encode than arrays of thousands of elements.
 */
const separator = "\u001e"

const layer = Layer.effect(
  DatasetRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * What dedupe compares besides the reference: the text input, else the messages as jsonb text
     * (so the order of keys inside a message does not matter).
     */
    const dedupeKey = (alias: string) => sql`coalesce(${sql(alias)}.input, (${sql(alias)}.data->'messages')::jsonb::text)`

    const stateColumns = sql`pending, pending_since, last_consolidated_at, latest_version, day::text AS day, day_used,
      month::text AS month, month_used`

    const stateOf = (rows: ReadonlyArray<unknown>) =>
      rows.length === 0 ? Effect.succeed(emptyState) : Effect.map(decodeState(rows[0]), (s): DatasetState => s)

    const state = (leaderboardId: LeaderboardId) =>
      sql`SELECT ${stateColumns} FROM datasets WHERE leaderboard_id = ${leaderboardId}`.pipe(
        Effect.flatMap(stateOf),
        Effect.orDie
      )

    /**
     * One statement: inserts the rows (a retried `id` is skipped) and counts those it stored in the
     * periods and as pending. Answers the state after it, and the ids stored when rows carry client
     * ids (else every row was stored). Alone it is its own transaction, so the leaderboard's counter
     * row is locked only for its commit. Rows with client ids go in client-id order, so two pushes
     * sharing ids wait for each other instead of deadlocking.
     */
    const insertAndCount = (
      input: AppendInput,
      unordered: ReadonlyArray<RowToStore>,
      periods: { readonly now: Date; readonly day: string; readonly month: string }
    ) => {
      const withClientId = unordered.some((row) => row.clientId !== null)
      const rows = withClientId
        ? [...unordered].sort((a, b) => (a.clientId ?? "") < (b.clientId ?? "") ? -1 : (a.clientId ?? "") > (b.clientId ?? "") ? 1 : 0)
        : unordered
      const ids = new Array<string>(rows.length)
      const clients = new Array<string | null>(rows.length)
      const data = new Array<string>(rows.length)
      const inputs = new Array<string | null>(rows.length)
      const references = new Array<string | null>(rows.length)
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!
        ids[i] = row.id
        clients[i] = row.clientId
        data[i] = row.json
        inputs[i] = row.input
        references[i] = row.reference
      }
      const { now } = periods
      // a few long parameters (see separator): ids joined by commas, text that may hold anything as JSON arrays
      const insert = sql`
        INSERT INTO dataset_rows (leaderboard_id, id, client_id, batch_id, data, input, reference, created_at)
        SELECT ${input.leaderboardId}, u.id, u.client_id, ${input.batchId}, u.data::json, u.input, u.reference, ${now}
        FROM ROWS FROM (
          unnest(string_to_array(${ids.join(",")}, ',')::uuid[]),
          unnest(string_to_array(${data.join(separator)}, chr(30))),
          json_array_elements_text(${JSON.stringify(clients)}::json),
          json_array_elements_text(${JSON.stringify(inputs)}::json),
          json_array_elements_text(${JSON.stringify(references)}::json)
        ) AS u(id, data, client_id, input, reference)`
      // without client ids every row is stored: a plain insert (no speculative insertion per row) of
      // which the count is known; with them, a retried id is skipped and the stored ones counted
      const stored = rows.length === 0
        ? sql`SELECT NULL::uuid AS id WHERE false`
        : withClientId
        ? sql`${insert} ON CONFLICT (leaderboard_id, client_id) WHERE client_id IS NOT NULL DO NOTHING RETURNING id`
        : insert
      const storedCount = withClientId ? sql`(SELECT count(*)::int AS n FROM stored)` : sql`(SELECT ${rows.length}::int AS n)`
      return sql<Record<string, unknown> & { stored_ids: ReadonlyArray<string> | null }>`
        WITH stored AS (${stored}), counted AS (
          INSERT INTO datasets AS d (leaderboard_id, pending, pending_since, day, day_used, month, month_used)
          SELECT ${input.leaderboardId}, c.n, CASE WHEN c.n > 0 THEN ${now}::timestamptz END, ${periods.day}::date, c.n,
                 ${periods.month}::date, c.n
          FROM ${storedCount} c
          ON CONFLICT (leaderboard_id) DO UPDATE SET
            pending = d.pending + EXCLUDED.pending,
            pending_since = CASE WHEN d.pending = 0 THEN EXCLUDED.pending_since ELSE d.pending_since END,
            -- a period never moves backwards: a push stamped just before midnight that commits after a
            -- push of the new day counts in the new day (as the allowance it was given did)
            day_used = CASE WHEN d.day >= EXCLUDED.day THEN d.day_used ELSE 0 END + EXCLUDED.day_used,
            day = GREATEST(d.day, EXCLUDED.day),
            month_used = CASE WHEN d.month >= EXCLUDED.month THEN d.month_used ELSE 0 END + EXCLUDED.month_used,
            month = GREATEST(d.month, EXCLUDED.month)
          RETURNING ${stateColumns}
        )
        SELECT counted.*, ${withClientId ? sql`(SELECT array_agg(id::text) FROM stored)` : sql`NULL::text[]`} AS stored_ids
        FROM counted`.pipe(
        Effect.flatMap(([row]) =>
          Effect.map(stateOf([row]), (state) => ({
            state,
            storedIds: withClientId ? new Set(row?.stored_ids ?? []) : undefined
          }))
        )
      )
    }

    /** Sorts the rows' outcome: stored, or (client id already there) a retry. */
    const outcome = (candidates: ReadonlyArray<RowToStore>, storedIds: ReadonlySet<string> | undefined, retried: Array<number>) => {
      const stored: Array<number> = []
      for (const row of candidates) {
        if (storedIds === undefined || storedIds.has(row.id)) stored.push(row.index)
        else retried.push(row.index)
      }
      return stored
    }

    /** Without limits: one statement, no lock held beyond its own commit. */
    const appendFreely = (input: AppendInput) =>
      Effect.gen(function*() {
        const periods = { now: toDate(input.now), day: input.periods.day, month: input.periods.month }
        const { state, storedIds } = yield* insertAndCount(input, input.rows, periods)
        const retried: Array<number> = []
        const stored = outcome(input.rows, storedIds, retried)
        return { stored, retried: retried.sort((a, b) => a - b), overLimit: [], state } satisfies AppendResult
      })

    /** With limits: the leaderboard's counts are locked until commit, so concurrent pushes take turns. */
    const appendWithinLimits = (input: AppendInput, allowance: (used: EventUsage) => number) =>
      sql.withTransaction(Effect.gen(function*() {
        const periods = { now: toDate(input.now), day: input.periods.day, month: input.periods.month }
        const retried: Array<number> = []
        const overLimit: Array<number> = []
        yield* sql`INSERT INTO datasets (leaderboard_id) VALUES (${input.leaderboardId}) ON CONFLICT DO NOTHING`
        const [locked] = yield* sql<{ day: string | null; day_used: number; month: string | null; month_used: number }>`
          SELECT day::text AS day, day_used, month::text AS month, month_used FROM datasets
          WHERE leaderboard_id = ${input.leaderboardId} FOR UPDATE`
        const clientIds = input.rows.flatMap((r) => r.clientId === null ? [] : [r.clientId])
        const known = clientIds.length === 0 ? new Set<string>() : new Set((yield* sql<{ client_id: string }>`
          SELECT client_id FROM dataset_rows
          WHERE leaderboard_id = ${input.leaderboardId} AND client_id = ANY(${clientIds}::text[])`).map((r) => r.client_id))
        // counted in the stored periods when they are newer than this push's (see insertAndCount)
        let room = allowance({
          daily: locked?.day != null && locked.day >= periods.day ? locked.day_used : 0,
          monthly: locked?.month != null && locked.month >= periods.month ? locked.month_used : 0
        })
        const seen = new Set<string>()
        const candidates = input.rows.filter((row) => {
          if (row.clientId !== null && (known.has(row.clientId) || seen.has(row.clientId))) {
            retried.push(row.index)
            return false
          }
          if (room <= 0) {
            overLimit.push(row.index)
            return false
          }
          room--
          if (row.clientId !== null) seen.add(row.clientId)
          return true
        })
        const { state, storedIds } = yield* insertAndCount(input, candidates, periods)
        const stored = outcome(candidates, storedIds, retried)
        return { stored, retried: retried.sort((a, b) => a - b), overLimit, state } satisfies AppendResult
      }))

    const append = (input: AppendInput) =>
      (input.allowance === undefined ? appendFreely(input) : appendWithinLimits(input, input.allowance)).pipe(
        // two pushes sharing client ids while the limits change can deadlock; Postgres aborts one, which goes again
        Effect.retry({ times: 3, while: (error) => "reason" in error && error.reason._tag === "DeadlockError" }),
        Effect.orDie
      )

    const versions = (leaderboardId: LeaderboardId) =>
      sql`SELECT version, row_count, added_rows, dropped_duplicates, labelled_rows, trigger, sha256, created_at
          FROM dataset_versions WHERE leaderboard_id = ${leaderboardId} ORDER BY version DESC`.pipe(
        Effect.flatMap(decodeVersions),
        Effect.map((rows) => rows.map((row) => new DatasetVersion(row))),
        Effect.orDie
      )

    const consolidate = (input: ConsolidateInput) =>
      sql.withTransaction(Effect.gen(function*() {
        const lb = input.leaderboardId
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(lb)}, 0))`
        const [previous] = yield* sql<{ version: number; total_rows: number; floor_id: string | null }>`
          SELECT version, total_rows, floor_id::text AS floor_id FROM dataset_versions
          WHERE leaderboard_id = ${lb} ORDER BY version DESC LIMIT 1`
        const version = (previous?.version ?? 0) + 1
        const marked = input.dedupe
          ? yield* sql<{ taken: number; dropped: number }>`
              WITH pending AS (
                SELECT id, ${dedupeKey("dataset_rows")} AS k, reference FROM dataset_rows
                WHERE leaderboard_id = ${lb} AND version IS NULL
              ), ranked AS (
                SELECT id, k, reference, row_number() OVER (PARTITION BY k, reference ORDER BY id) AS n FROM pending
              ), duplicate AS (
                -- two queries, not one with OR: the second is then a hash semi-join, not a scan per pending row
                SELECT id FROM ranked WHERE n > 1
                UNION
                SELECT r.id FROM ranked r
                WHERE EXISTS (
                  SELECT 1 FROM dataset_rows o
                  WHERE o.leaderboard_id = ${lb} AND o.version IS NOT NULL AND NOT o.dropped
                    AND (${previous?.floor_id ?? null}::uuid IS NULL OR o.id >= ${previous?.floor_id ?? null}::uuid)
                    AND ${dedupeKey("o")} = r.k AND o.reference IS NOT DISTINCT FROM r.reference)
              ), updated AS (
                UPDATE dataset_rows d SET version = ${version}, dropped = EXISTS (SELECT 1 FROM duplicate x WHERE x.id = d.id)
                FROM pending p WHERE d.leaderboard_id = ${lb} AND d.id = p.id
                RETURNING d.dropped
              )
              SELECT count(*)::int AS taken, count(*) FILTER (WHERE dropped)::int AS dropped FROM updated`
          : yield* sql<{ taken: number; dropped: number }>`
              WITH updated AS (
                UPDATE dataset_rows SET version = ${version} WHERE leaderboard_id = ${lb} AND version IS NULL RETURNING 1
              )
              SELECT count(*)::int AS taken, 0 AS dropped FROM updated`
        const taken = marked[0]?.taken ?? 0
        const dropped = marked[0]?.dropped ?? 0
        if (taken === 0) return Option.none<DatasetVersion>()
        const total = (previous?.total_rows ?? 0) + taken - dropped
        // newest N: the version starts at the N-th newest row it holds
        const [floor] = input.newest !== null && total > input.newest
          ? yield* sql<{ id: string }>`
              SELECT r.id::text AS id FROM dataset_rows r
              WHERE r.leaderboard_id = ${lb} AND r.version IS NOT NULL AND NOT r.dropped
              ORDER BY r.id DESC OFFSET ${input.newest - 1} LIMIT 1`
          : []
        const created = new DatasetVersion({
          version,
          row_count: input.newest === null ? total : Math.min(total, input.newest),
          added_rows: taken - dropped,
          dropped_duplicates: dropped,
          labelled_rows: 0,
          trigger: input.trigger,
          sha256: null,
          created_at: input.now
        })
        yield* sql`
          INSERT INTO dataset_versions (leaderboard_id, version, row_count, total_rows, added_rows, dropped_duplicates,
            labelled_rows, trigger, floor_id, sha256, created_at)
          VALUES (${lb}, ${version}, ${created.row_count}, ${total}, ${created.added_rows}, ${dropped}, 0, ${input.trigger},
            ${floor?.id ?? null}, NULL, ${toDate(input.now)})`
        yield* sql`
          UPDATE datasets SET pending = pending - ${taken}, latest_version = ${version},
            last_consolidated_at = ${toDate(input.now)},
            pending_since = CASE WHEN pending - ${taken} > 0 THEN ${toDate(input.now)}::timestamptz END
          WHERE leaderboard_id = ${lb}`
        return Option.some(created)
      })).pipe(Effect.orDie)

    /**
     * A version's JSONL: one query streamed with backpressure (memory holds a few hundred rows), as
     * bytes (`convert_to`: no UTF-8 decoding and encoding again in between), in
     * primary-key (arrival) order — `ORDER BY r.id`, since an unqualified `id` next to `id::text AS
     * id` would be the text and sort every row. The labels join is made only when the version has labels.
     */
    const download = (leaderboardId: LeaderboardId, version: number): Stream.Stream<Uint8Array> =>
      Stream.unwrap(Effect.gen(function*() {
        const [found] = yield* sql<{ floor_id: string | null; labelled: boolean }>`
          SELECT floor_id::text AS floor_id,
                 EXISTS (SELECT 1 FROM dataset_versions l WHERE l.leaderboard_id = v.leaderboard_id
                         AND l.version <= v.version AND l.labelled_rows > 0) AS labelled
          FROM dataset_versions v WHERE v.leaderboard_id = ${leaderboardId} AND v.version = ${version}`
        if (found === undefined) return Stream.empty
        const floor = found.floor_id ?? nilUuid
        const rows = found.labelled
          ? sql<{ line: Uint8Array }>`
              SELECT convert_to(CASE WHEN l.reference IS NULL THEN r.data::text
                     ELSE (r.data::jsonb || jsonb_build_object('expected', l.reference, 'label_source', 'auto',
                       'label_model', l.model))::text END, 'UTF8') AS line
              FROM dataset_rows r
              LEFT JOIN dataset_labels l ON l.leaderboard_id = r.leaderboard_id AND l.row_id = r.id AND l.version <= ${version}
              WHERE r.leaderboard_id = ${leaderboardId} AND r.id >= ${floor}::uuid AND r.version <= ${version} AND NOT r.dropped
              ORDER BY r.id`.stream
          : sql<{ line: Uint8Array }>`
              SELECT convert_to(r.data::text, 'UTF8') AS line FROM dataset_rows r
              WHERE r.leaderboard_id = ${leaderboardId} AND r.id >= ${floor}::uuid AND r.version <= ${version} AND NOT r.dropped
              ORDER BY r.id`.stream
        return rows.pipe(
          Stream.rechunk(linesPerChunk),
          Stream.mapArray((chunk) => {
            let size = 0
            for (const row of chunk) size += row.line.length + 1
            const bytes = new Uint8Array(size)
            let at = 0
            for (const row of chunk) {
              bytes.set(row.line, at)
              at += row.line.length
              bytes[at++] = 10 // \n
            }
            return [bytes] as const
          })
        )
      })).pipe(Stream.orDie)

    const hash = (leaderboardId: LeaderboardId, version: number) =>
      Effect.gen(function*() {
        const digest = createHash("sha256")
        yield* Stream.runForEach(download(leaderboardId, version), (bytes) => Effect.sync(() => digest.update(bytes)))
        const sha256 = digest.digest("hex")
        yield* sql`UPDATE dataset_versions SET sha256 = ${sha256} WHERE leaderboard_id = ${leaderboardId} AND version = ${version}`
        return sha256
      }).pipe(Effect.orDie)

    return DatasetRepository.of({
      append,
      state,
      versions,
      // one snapshot for both reads (each statement of a READ COMMITTED transaction would see its own)
      snapshot: (leaderboardId) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`.pipe(Effect.orDie)
          return { state: yield* state(leaderboardId), versions: yield* versions(leaderboardId) }
        })).pipe(Effect.orDie),
      consolidate,
      download,
      hash,
      unhashed: sql<{ leaderboard_id: LeaderboardId; version: number }>`
        SELECT leaderboard_id::text AS leaderboard_id, version FROM dataset_versions WHERE sha256 IS NULL LIMIT 100`.pipe(
        Effect.map((rows) => rows.map((r) => ({ leaderboardId: r.leaderboard_id, version: r.version }))),
        Effect.orDie
      ),
      pending: sql`SELECT leaderboard_id::text AS leaderboard_id, ${stateColumns} FROM datasets WHERE pending > 0`.pipe(
        Effect.flatMap((rows) =>
          Effect.forEach(rows, (row) =>
            Effect.map(decodeState(row), (s) => ({
              leaderboardId: (row as { leaderboard_id: LeaderboardId }).leaderboard_id,
              state: s as DatasetState
            })))
        ),
        Effect.orDie
      )
    })
  })
)

export const DatasetRepositoryPg = { layer }
