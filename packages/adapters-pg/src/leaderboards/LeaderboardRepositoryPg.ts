import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  Candidate,
  Leaderboard,
  type LeaderboardId,
  LeaderboardRepository,
  type Serving,
  ServingPolicy,
} from "@podium/domain/leaderboards"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { Timestamp, toDate } from "../Rows.ts"

const LeaderboardRow = Schema.Struct({
  ...Leaderboard.fields,
  created_at: Timestamp,
  updated_at: Timestamp,
  serving_policy: Schema.NullOr(ServingPolicy)
})
const CandidateRow = Schema.Struct({ ...Candidate.fields, created_at: Timestamp })
/** Candidates aggregated as JSON: timestamps arrive as strings, credentials alongside. */
const ServingRow = Schema.Struct({
  ...LeaderboardRow.fields,
  ranking_winner_id: Schema.NullOr(Schema.String),
  candidates: Schema.Array(Schema.Struct({
    ...Candidate.fields,
    created_at: Schema.DateTimeUtcFromString,
    sealed_token: Schema.NullOr(Schema.String)
  }))
})

const layer = Layer.effect(
  LeaderboardRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const columns = sql`id, workspace_id, name, description, status, chosen_model_strategy, chosen_leaderboard_model_id,
      schedule, challenge, extra, created_at, updated_at, version, serving_policy`
    const candidateColumns = sql`id, leaderboard_id, name, platform, model_name, model_url, url, model_id::text AS model_id,
      auth_type, auth_header_name, sealed_token IS NOT NULL AS has_token, input_price_per_m_tokens,
      output_price_per_m_tokens, created_at`

    const list = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, limit: Schema.Number, offset: Schema.Number }),
      Result: LeaderboardRow,
      execute: ({ limit, offset, workspaceId }) =>
        sql`SELECT ${columns} FROM leaderboards WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL
            ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`
    })
    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: LeaderboardRow,
      execute: (id) => sql`SELECT ${columns} FROM leaderboards WHERE id = ${id} AND deleted_at IS NULL`
    })
    const due = SqlSchema.findAll({
      Request: Schema.Date,
      Result: LeaderboardRow,
      execute: (now) =>
        sql`SELECT ${columns} FROM leaderboards
            WHERE deleted_at IS NULL AND schedule ? 'cron'
              -- schedules stored before they were checked may hold anything: only a timestamp is cast
              AND (CASE WHEN schedule ->> 'next_run_at' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$'
                        THEN (schedule ->> 'next_run_at')::timestamptz END) <= ${now}`
    })
    const candidates = SqlSchema.findAll({
      Request: Schema.String,
      Result: CandidateRow,
      execute: (id) => sql`SELECT ${candidateColumns} FROM leaderboard_models WHERE leaderboard_id = ${id} ORDER BY id`
    })
    const findServing = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ServingRow,
      execute: (id) =>
        sql`SELECT ${columns}, l.ranking_winner_id::text AS ranking_winner_id, COALESCE((
              SELECT json_agg(json_build_object(
                'id', m.id, 'leaderboard_id', m.leaderboard_id, 'name', m.name, 'platform', m.platform,
                'model_name', m.model_name, 'model_url', m.model_url, 'url', m.url, 'model_id', m.model_id,
                'auth_type', m.auth_type, 'auth_header_name', m.auth_header_name,
                'has_token', m.sealed_token IS NOT NULL, 'sealed_token', m.sealed_token,
                'input_price_per_m_tokens', m.input_price_per_m_tokens,
                'output_price_per_m_tokens', m.output_price_per_m_tokens, 'created_at', m.created_at
              ) ORDER BY m.id) FROM leaderboard_models m WHERE m.leaderboard_id = l.id), '[]'::json) AS candidates
            FROM leaderboards l WHERE l.id = ${id} AND l.deleted_at IS NULL`
    })
    const toLeaderboard = ({ serving_policy, ...row }: typeof LeaderboardRow.Type) =>
      new Leaderboard(serving_policy === null ? row : { ...row, serving_policy })
    const policyOf = (l: Leaderboard) => l.serving_policy === undefined ? null : pg.json(l.serving_policy)
    const serving = (id: LeaderboardId) =>
      findServing(id).pipe(
        Effect.map(Option.map(({ candidates, ranking_winner_id, ...leaderboard }): Serving => ({
          ranking_winner: ranking_winner_id,
          leaderboard: toLeaderboard(leaderboard),
          candidates: candidates.map(({ sealed_token: _, ...candidate }) => new Candidate(candidate)),
          credentials: new Map(candidates.flatMap((c) => c.sealed_token === null ? [] : [[c.id, c.sealed_token] as const]))
        }))),
        Effect.orDie
      )
    // Every inference call reads its leaderboard: keep a copy.
    const copies = (yield* ChangeFeed).copies<Serving>("leaderboard", { tagOf: (s) => s.leaderboard.id })
    const dropCopy = (id: string) => Effect.sync(() => copies.drop(id))

    return LeaderboardRepository.of({
      insert: (l) =>
        sql`INSERT INTO leaderboards (id, workspace_id, name, description, status, chosen_model_strategy,
              chosen_leaderboard_model_id, schedule, challenge, extra, created_at, updated_at, version, serving_policy)
            VALUES (${l.id}, ${l.workspace_id}, ${l.name}, ${l.description}, ${l.status}, ${l.chosen_model_strategy},
              ${l.chosen_leaderboard_model_id}, ${pg.json(l.schedule)}, ${pg.json(l.challenge)}, ${pg.json(l.extra)},
              ${toDate(l.created_at)}, ${toDate(l.updated_at)}, ${l.version}, ${policyOf(l)})`.pipe(Effect.asVoid, Effect.orDie),
      list: (workspaceId, page) =>
        list({ workspaceId, ...page }).pipe(Effect.map((rows) => rows.map(toLeaderboard)), Effect.orDie),
      find: (id) => find(id).pipe(Effect.map(Option.map(toLeaderboard)), Effect.orDie),
      findServing: serving,
      servingSnapshot: (id) => copies.get(id, serving(id)),
      update: (l) =>
        sql`UPDATE leaderboards SET name = ${l.name}, description = ${l.description}, status = ${l.status},
              chosen_model_strategy = ${l.chosen_model_strategy},
              chosen_leaderboard_model_id = ${l.chosen_leaderboard_model_id}, schedule = ${pg.json(l.schedule)},
              challenge = ${pg.json(l.challenge)}, extra = ${pg.json(l.extra)}, updated_at = ${toDate(l.updated_at)},
              version = ${l.version}, serving_policy = ${policyOf(l)}
            WHERE id = ${l.id} AND version = ${l.version - 1} AND deleted_at IS NULL RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(dropCopy(l.id))
        ),
      setRankingWinner: (id, candidateId) =>
        sql`UPDATE leaderboards SET ranking_winner_id = ${candidateId}
            WHERE id = ${id} AND ranking_winner_id IS DISTINCT FROM ${candidateId}::uuid`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.ensuring(dropCopy(id))
        ),
      dueSchedules: (now) => due(toDate(now)).pipe(Effect.map((rows) => rows.map(toLeaderboard)), Effect.orDie),
      advanceSchedule: (id, from, next) =>
        sql`UPDATE leaderboards SET schedule = jsonb_set(schedule, '{next_run_at}', to_jsonb(${next}::text)), version = version + 1
            WHERE id = ${id} AND deleted_at IS NULL AND schedule ->> 'next_run_at' = ${from} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(dropCopy(id))
        ),
      softDelete: (id, now) =>
        sql`UPDATE leaderboards SET deleted_at = ${toDate(now)} WHERE id = ${id} AND deleted_at IS NULL RETURNING id`
          .pipe(Effect.map((rows) => rows.length > 0), Effect.orDie, Effect.ensuring(dropCopy(id))),
      candidates: (id) =>
        candidates(id).pipe(Effect.map((rows) => rows.map((row) => new Candidate(row))), Effect.orDie),
      insertCandidates: (rows) =>
        sql.withTransaction(Effect.forEach(rows, ({ candidate: c, sealedToken }) =>
          sql`INSERT INTO leaderboard_models (id, leaderboard_id, name, platform, model_name, model_url, url, model_id,
                auth_type, auth_header_name, sealed_token, input_price_per_m_tokens, output_price_per_m_tokens, created_at)
              VALUES (${c.id}, ${c.leaderboard_id}, ${c.name}, ${c.platform}, ${c.model_name}, ${c.model_url}, ${c.url},
                ${c.model_id}, ${c.auth_type}, ${c.auth_header_name}, ${sealedToken}, ${c.input_price_per_m_tokens},
                ${c.output_price_per_m_tokens}, ${toDate(c.created_at)})`, { discard: true })).pipe(
          Effect.orDie,
          Effect.ensuring(Effect.forEach(new Set(rows.map((row) => row.candidate.leaderboard_id)), dropCopy, { discard: true }))
        ),
      removeCandidate: (leaderboardId, id) =>
        sql.withTransaction(Effect.gen(function*() {
          // The leaderboard first, as an update does: an update racing this one waits and then
          // finds a new version, instead of deadlocking on the candidate its foreign key checks.
          yield* sql`SELECT 1 FROM leaderboards WHERE id = ${leaderboardId} FOR NO KEY UPDATE`
          const removed = yield* sql`DELETE FROM leaderboard_models
                                     WHERE id = ${id} AND leaderboard_id = ${leaderboardId} RETURNING id`
          if (removed.length === 0) return false
          // The foreign key has cleared a choice of this candidate; manual serving falls back to the ranking.
          yield* sql`UPDATE leaderboards SET version = version + 1, chosen_model_strategy = CASE
                       WHEN chosen_leaderboard_model_id IS NULL THEN 'ranking_winner' ELSE chosen_model_strategy END
                     WHERE id = ${leaderboardId}`
          return true
        })).pipe(Effect.orDie, Effect.ensuring(dropCopy(leaderboardId)))
    })
  })
)

export const LeaderboardRepositoryPg = { layer }
