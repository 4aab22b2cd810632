import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Improve-dataset. A job's targets are stored when it starts (the rows to improve, with the latest
 * run's answers as hints), each proposal written once; publishing copies the proposals into
 * `improved_references`, the leaderboard's derived version, keyed by the input (its md5: inputs may
 * be longer than an index entry can hold). One job runs per leaderboard at a time.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE improvement_jobs (
      id uuid PRIMARY KEY,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
      labeller text NOT NULL,
      replace_references boolean NOT NULL,
      prepared boolean NOT NULL DEFAULT false,
      total integer NOT NULL DEFAULT 0,
      improved integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      version integer,
      error text,
      created_at timestamptz NOT NULL,
      finished_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX improvement_jobs_running_idx ON improvement_jobs (leaderboard_id) WHERE status = 'running'`
  yield* sql`CREATE INDEX improvement_jobs_leaderboard_idx ON improvement_jobs (leaderboard_id, created_at DESC)`
  yield* sql`
    CREATE TABLE improvement_targets (
      job_id uuid NOT NULL REFERENCES improvement_jobs (id) ON DELETE CASCADE,
      idx integer NOT NULL,
      key text NOT NULL,
      prompt jsonb NOT NULL,
      input text NOT NULL,
      reference text,
      answers jsonb NOT NULL,
      proposed boolean NOT NULL DEFAULT false,
      proposal text,
      PRIMARY KEY (job_id, idx)
    )`
  yield* sql`
    CREATE TABLE improved_references (
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      key_hash text NOT NULL,
      key text NOT NULL,
      reference text NOT NULL,
      model text NOT NULL,
      version integer NOT NULL,
      job_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (leaderboard_id, key_hash)
    )`
})
