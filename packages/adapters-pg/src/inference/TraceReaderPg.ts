import { Effect, Layer, Option, Schema, Sink, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { TraceReader, type TraceFilter, type TracePosition, Trace } from "@podium/domain/inference"
import { Timestamp } from "../Rows.ts"

const TraceRow = Schema.Struct({ ...Trace.fields, created_at: Timestamp })
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(TraceRow))

const utf8 = new TextEncoder()

const traceColumns = "id, workspace_id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages, " +
  "output, status, error, latency_ms, usage, cost_usd, token_id, created_at"

/** A message's role or content as text: a string as it is, any other JSON value as its JSON text. */
const text = (field: string) => `coalesce(m->>'${field}', '')`

/** The row's `messages` when it is an array, else SQL null. */
const messagesArray = `CASE WHEN json_typeof(r.data->'messages') = 'array' THEN r.data->'messages' END`

/** The row's `field` when it is a JSON number, else null. */
const number = (field: string) =>
  `CASE WHEN json_typeof(r.data->'${field}') = 'number' THEN (r.data->>'${field}')::double precision END`

/**
 * A pushed dataset row as a trace of source `dataset`, column for column with `traces` (same types,
 * so the union stays one relation the planner merges by index): the input as pushed, or the last
 * user message's content when the row's input is `messages`; the reference as output.
 */
const datasetRowColumns = `
  r.leaderboard_id, NULL::uuid, 'dataset', NULL::uuid,
  coalesce(r.input, (
    SELECT ${text("content")} FROM json_array_elements(${messagesArray}) WITH ORDINALITY AS e(m, n)
    WHERE m->>'role' = 'user' ORDER BY n DESC LIMIT 1)),
  coalesce((
    SELECT jsonb_agg(jsonb_build_object('role', ${text("role")}, 'content', ${text("content")}) ORDER BY n)
    FROM json_array_elements(${messagesArray}) WITH ORDINALITY AS e(m, n)), '[]'::jsonb),
  r.reference, 'success', NULL::text, ${number("latency_ms")}, NULL::jsonb, ${number("cost_usd")}, NULL::uuid, r.created_at`

const layer = Layer.effect(
  TraceReader,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The traces a filter reads, as one relation of trace columns (or only `id, leaderboard_id`), or
     * null when none can match. Pushed dataset rows are traces of source `dataset`, read where they are
     * stored rather than copied into `traces` (which would double the cost of ingest).
     */
    const matching = (filter: TraceFilter, idsOnly: boolean) => {
      const readsTraces = filter.source !== "dataset"
      const readsDatasetRows = (filter.source === undefined || filter.source === "dataset") && filter.runId === undefined
      const conditions = [
        ...(filter.source === undefined ? [] : [sql`source = ${filter.source}`]),
        ...(filter.runId === undefined ? [] : [sql`run_id = ${filter.runId}`])
      ]
      const traces = sql`
        SELECT ${sql.literal(idsOnly ? "id, leaderboard_id" : traceColumns)} FROM traces
        ${conditions.length === 0 ? sql`` : sql`WHERE ${sql.and(conditions)}`}`
      const datasetRows = idsOnly
        ? sql`SELECT r.id, r.leaderboard_id FROM dataset_rows r`
        : sql`SELECT r.id, (SELECT workspace_id FROM leaderboards WHERE id = ${filter.leaderboardId}),
                ${sql.literal(datasetRowColumns)}
              FROM dataset_rows r`
      const sides = [...(readsTraces ? [traces] : []), ...(readsDatasetRows ? [datasetRows] : [])]
      return sides.length === 0 ? null : sql.join(" UNION ALL ", false)(sides)
    }

    // (leaderboard_id, id) is indexed on both sides: a cursor is a seek, an offset a walk of the index.
    // The conditions stay outside the union so Postgres merges the two index scans in id order; the
    // order is by `t.id`, the uuid as indexed (plain `id` would name the text column of the select list).
    const where = (filter: TraceFilter, from: TracePosition) =>
      sql.and([
        sql`t.leaderboard_id = ${filter.leaderboardId}`,
        ...(from.afterId === null ? [] : [sql`t.id > ${from.afterId}`])
      ])

    /** The id the page ends on when another row follows it (the page's `count` rows from `from`), else null. */
    const pageEndSql = (filter: TraceFilter, from: TracePosition, count: number) => {
      const source = matching(filter, true)
      return source === null ? null : sql`
        SELECT t.id::text AS id FROM (${source}) AS t (id, leaderboard_id)
        WHERE ${where(filter, from)} ORDER BY t.id LIMIT 2 OFFSET ${from.offset + count - 1}`
    }

    /**
     * Export lines made by Postgres (`row_to_json` of the wire columns), streamed as the index scan
     * yields them, and joined here into chunks of at most `chunkLines` lines handed over as bytes:
     * one statement for the page, no per-trace decoding, parsing or serialising here, and the page's
     * first lines leave while Postgres still renders its last ones. The same statement says where
     * the next page starts: an uncorrelated subquery, which Postgres runs once before the first row,
     * and each row carries its answer; it is read from the first row, so the statement is started
     * (in the caller's scope) before the chunks are handed over.
     */
    const lines = (filter: TraceFilter, from: TracePosition, limit: number, chunkLines: number) =>
      Effect.gen(function*() {
        const source = matching(filter, false)
        const end = pageEndSql(filter, from, limit)
        if (source === null || end === null) return { nextCursor: null, chunks: Stream.empty }
        const rows = sql<{ next: string | null; line: string }>`
          SELECT (SELECT CASE WHEN count(*) = 2 THEN min(e.id COLLATE "C") END FROM (${end}) AS e) AS next,
            row_to_json(page)::text AS line
          FROM (
            SELECT t.id, t.leaderboard_id, t.leaderboard_model_id, t.source, t.run_id, t.input, t.messages, t.output,
              t.status, t.error, t.latency_ms, t.usage, t.cost_usd, t.token_id,
              to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
            FROM (${source}) AS t (${sql.literal(traceColumns)})
            WHERE ${where(filter, from)} ORDER BY t.id LIMIT ${limit} OFFSET ${from.offset}
          ) AS page
          ORDER BY page.id`.stream.pipe(Stream.orDie)
        const [first, rest] = yield* Stream.peel(rows, Sink.head())
        if (Option.isNone(first)) return { nextCursor: null, chunks: Stream.empty }
        const chunks = Stream.concat(Stream.make(first.value), rest).pipe(
          Stream.rechunk(Math.max(1, chunkLines)),
          Stream.mapArray((chunk) => [utf8.encode(chunk.map((row) => row.line).join("\n") + "\n")] as const)
        )
        return { nextCursor: first.value.next, chunks }
      })

    return TraceReader.of({
      lines,
      batch: (filter, from, size) => {
        const source = matching(filter, false)
        return source === null ? Effect.succeed([]) : sql`
          SELECT t.id::text AS id, t.workspace_id::text AS workspace_id, t.leaderboard_id::text AS leaderboard_id,
            t.leaderboard_model_id::text AS leaderboard_model_id, t.source, t.run_id::text AS run_id, t.input,
            t.messages, t.output, t.status, t.error, t.latency_ms, t.usage, t.cost_usd, t.token_id::text AS token_id,
            t.created_at
          FROM (${source}) AS t (${sql.literal(traceColumns)})
          WHERE ${where(filter, from)} ORDER BY t.id LIMIT ${size} OFFSET ${from.offset}`.pipe(
          Effect.flatMap(decodeRows),
          Effect.orDie
        )
      },
      pageEnd: (filter, from, count) => {
        const end = pageEndSql(filter, from, count)
        return end === null ? Effect.succeed(null) : end.pipe(
          Effect.map((rows) => rows.length === 2 ? String(rows[0]!["id"]) : null),
          Effect.orDie
        )
      }
    })
  })
)

export const TraceReaderPg = { layer }
