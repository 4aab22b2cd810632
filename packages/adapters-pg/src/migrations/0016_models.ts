import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Models, their fine-tunes and the versions those make.
 *
 * - A model is deleted softly (`deleted_at`); its leaderboards are `model_leaderboards`, in the order
 *   they were given (`position`). A scheduled fine-tune is claimed by moving `next_fine_tune_at`
 *   conditionally, so one instance takes each occurrence.
 * - A model has at most one active (queued or running) fine-tune: a partial unique index, so two
 *   instances cannot both start one. A run's examples are copied in when it starts.
 * - A version is immutable: a trigger refuses any change but its deployment (`deployment_status`,
 *   `deployed_at`), and refuses deleting it while its model's row exists. Models are only ever
 *   deleted softly, so a version goes only with its workspace (the cascade removes the model first).
 *   At most one version of a model is `active`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE models (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      model_name text,
      description text,
      creation_mode text NOT NULL,
      selected_base_model_version_id text,
      selected_base_model_resolution_id text,
      auto_update_model boolean NOT NULL,
      continuous_self_learning boolean NOT NULL,
      hypertuning_parameters boolean NOT NULL,
      fine_tune_schedule jsonb,
      next_fine_tune_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX models_workspace_idx ON models (workspace_id, created_at, id) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE INDEX models_due_idx ON models (next_fine_tune_at)
    WHERE deleted_at IS NULL AND next_fine_tune_at IS NOT NULL`
  yield* sql`
    CREATE TABLE model_leaderboards (
      model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      position integer NOT NULL,
      PRIMARY KEY (model_id, leaderboard_id)
    )`
  yield* sql`CREATE INDEX model_leaderboards_leaderboard_idx ON model_leaderboards (leaderboard_id)`

  yield* sql`
    CREATE TABLE fine_tune_runs (
      id uuid PRIMARY KEY,
      model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      trigger text NOT NULL CHECK (trigger IN ('manual', 'schedule', 'continuous')),
      trainer text NOT NULL CHECK (trainer IN ('openai', 'few_shot')),
      base_model jsonb NOT NULL,
      options jsonb NOT NULL,
      dataset jsonb,
      remote jsonb,
      metrics jsonb,
      events jsonb NOT NULL DEFAULT '[]',
      artifact jsonb,
      version_id uuid,
      gate jsonb,
      error text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX fine_tune_runs_active_idx ON fine_tune_runs (model_id) WHERE status IN ('queued', 'running')`
  yield* sql`CREATE INDEX fine_tune_runs_model_idx ON fine_tune_runs (model_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX fine_tune_runs_queued_idx ON fine_tune_runs (created_at) WHERE status = 'queued'`
  yield* sql`
    CREATE TABLE fine_tune_examples (
      run_id uuid NOT NULL REFERENCES fine_tune_runs (id) ON DELETE CASCADE,
      idx integer NOT NULL,
      split text NOT NULL CHECK (split IN ('training', 'held_out')),
      leaderboard_id uuid NOT NULL,
      input text NOT NULL,
      reference text NOT NULL,
      messages jsonb NOT NULL,
      PRIMARY KEY (run_id, idx)
    )`

  yield* sql`
    CREATE TABLE model_versions (
      id uuid PRIMARY KEY,
      model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
      fine_tune_run_id uuid NOT NULL UNIQUE REFERENCES fine_tune_runs (id) ON DELETE CASCADE,
      trainer text NOT NULL CHECK (trainer IN ('openai', 'few_shot')),
      base_model jsonb NOT NULL,
      metrics jsonb NOT NULL,
      artifact jsonb NOT NULL,
      deployment_status text NOT NULL CHECK (deployment_status IN ('none', 'deploying', 'active', 'failed', 'stopped')),
      created_at timestamptz NOT NULL,
      completed_at timestamptz NOT NULL,
      deployed_at timestamptz
    )`
  yield* sql`CREATE INDEX model_versions_model_idx ON model_versions (model_id, created_at DESC, id DESC)`
  yield* sql`CREATE UNIQUE INDEX model_versions_active_idx ON model_versions (model_id) WHERE deployment_status = 'active'`
  yield* sql`
    CREATE FUNCTION podium_model_version_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF EXISTS (SELECT 1 FROM models WHERE id = OLD.model_id) THEN
          RAISE EXCEPTION 'model version % is never deleted', OLD.id USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN OLD;
      END IF;
      IF (to_jsonb(NEW) - 'deployment_status' - 'deployed_at') IS DISTINCT FROM
         (to_jsonb(OLD) - 'deployment_status' - 'deployed_at') THEN
        RAISE EXCEPTION 'model version % is immutable: only its deployment changes', OLD.id
          USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN NEW;
    END
    $$`
  yield* sql`
    CREATE TRIGGER model_versions_immutable BEFORE UPDATE OR DELETE ON model_versions FOR EACH ROW
    EXECUTE FUNCTION podium_model_version_immutable()`
})
