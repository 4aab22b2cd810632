import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Human evaluation: documents, cases (one row each, the stage in columns), their responses (one
 * per candidate, with the current review's verdict, so the ranking is one aggregate) and the
 * review history. Client ids of cases and documents share one table, so an id is used once.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE human_client_ids (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('case', 'document'))
    )`
  yield* sql`
    CREATE TABLE human_documents (
      id uuid PRIMARY KEY REFERENCES human_client_ids (id),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      name text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('case', 'shared')),
      media_type text NOT NULL,
      size_bytes integer NOT NULL,
      sha256 text NOT NULL,
      content bytea NOT NULL,
      text text NOT NULL,
      text_chars integer NOT NULL,
      created_at timestamptz NOT NULL,
      archived_at timestamptz
    )`
  yield* sql`CREATE INDEX human_documents_shared_idx ON human_documents (leaderboard_id, created_at) WHERE scope = 'shared'`
  yield* sql`
    CREATE TABLE human_cases (
      id uuid PRIMARY KEY REFERENCES human_client_ids (id),
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      input text NOT NULL,
      context text NOT NULL,
      prompt_override text,
      prompt text NOT NULL,
      attachments jsonb NOT NULL,
      configuration text NOT NULL,
      configuration_hash text GENERATED ALWAYS AS (md5(configuration)) STORED,
      creation_key text NOT NULL,
      revision integer NOT NULL CHECK (revision > 0),
      stage text NOT NULL CHECK (stage IN ('draft', 'generating', 'generated')),
      claim_id text,
      claimed_at timestamptz,
      slots jsonb,
      generated_at timestamptz,
      review_state text NOT NULL CHECK (review_state IN ('none', 'draft', 'confirmed')),
      review jsonb NOT NULL,
      revealed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((stage = 'draft') = (claim_id IS NULL)),
      CHECK ((stage = 'generated') = (generated_at IS NOT NULL)),
      CHECK (stage = 'generated' OR review_state = 'none')
    )`
  yield* sql`CREATE INDEX human_cases_page_idx ON human_cases (leaderboard_id, created_at, id)`
  yield* sql`
    CREATE INDEX human_cases_pending_idx ON human_cases (leaderboard_id, configuration_hash, created_at, id)
    WHERE review_state <> 'confirmed'`
  yield* sql`
    CREATE TABLE human_responses (
      id uuid PRIMARY KEY,
      case_id uuid NOT NULL REFERENCES human_cases (id) ON DELETE CASCADE,
      candidate_id uuid NOT NULL,
      label text NOT NULL,
      status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
      output text,
      error text,
      latency_ms double precision,
      usage jsonb,
      cost_usd double precision,
      trace_id uuid,
      verdict text CHECK (verdict IN ('correct', 'incorrect', 'abstain')),
      created_at timestamptz NOT NULL,
      UNIQUE (case_id, candidate_id),
      CHECK (status = 'succeeded' OR verdict IS NULL)
    )`
  yield* sql`
    CREATE TABLE human_review_history (
      case_id uuid NOT NULL REFERENCES human_cases (id) ON DELETE CASCADE,
      revision integer NOT NULL,
      confirmed boolean NOT NULL,
      review jsonb NOT NULL,
      saved_by uuid,
      saved_at timestamptz NOT NULL,
      PRIMARY KEY (case_id, revision)
    )`
})
