import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Client ids of cases and documents are unique per workspace, not globally: another workspace's
 * use of an id must not show (nor matter). Every table keyed by such an id is keyed by
 * (workspace_id, id) instead, and what refers to a case carries its workspace.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // the foreign keys go first: they hold the primary keys being replaced
  yield* sql`ALTER TABLE human_responses DROP CONSTRAINT human_responses_case_id_fkey`
  yield* sql`ALTER TABLE human_review_history DROP CONSTRAINT human_review_history_case_id_fkey`
  yield* sql`ALTER TABLE human_cases DROP CONSTRAINT human_cases_id_fkey`
  yield* sql`ALTER TABLE human_documents DROP CONSTRAINT human_documents_id_fkey`

  yield* sql`ALTER TABLE human_client_ids ADD COLUMN workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE`
  yield* sql`
    UPDATE human_client_ids i SET workspace_id = owner.workspace_id
    FROM (SELECT id, workspace_id FROM human_cases UNION ALL SELECT id, workspace_id FROM human_documents) owner
    WHERE owner.id = i.id`
  // ids whose case or document is gone (its workspace deleted) belong to no workspace any more
  yield* sql`DELETE FROM human_client_ids WHERE workspace_id IS NULL`
  yield* sql`
    ALTER TABLE human_client_ids ALTER COLUMN workspace_id SET NOT NULL,
      DROP CONSTRAINT human_client_ids_pkey, ADD PRIMARY KEY (workspace_id, id)`

  for (const table of ["human_cases", "human_documents"]) {
    yield* sql`
      ALTER TABLE ${sql(table)} DROP CONSTRAINT ${sql(`${table}_pkey`)}, ADD PRIMARY KEY (workspace_id, id),
        ADD FOREIGN KEY (workspace_id, id) REFERENCES human_client_ids (workspace_id, id) ON DELETE CASCADE`
  }

  for (const table of ["human_responses", "human_review_history"]) {
    yield* sql`ALTER TABLE ${sql(table)} ADD COLUMN workspace_id uuid`
    yield* sql`UPDATE ${sql(table)} t SET workspace_id = c.workspace_id FROM human_cases c WHERE c.id = t.case_id`
    yield* sql`
      ALTER TABLE ${sql(table)} ALTER COLUMN workspace_id SET NOT NULL,
        ADD FOREIGN KEY (workspace_id, case_id) REFERENCES human_cases (workspace_id, id) ON DELETE CASCADE`
  }
  yield* sql`
    ALTER TABLE human_responses DROP CONSTRAINT human_responses_case_id_candidate_id_key,
      ADD UNIQUE (workspace_id, case_id, candidate_id)`
  yield* sql`
    ALTER TABLE human_review_history DROP CONSTRAINT human_review_history_pkey,
      ADD PRIMARY KEY (workspace_id, case_id, revision)`
})
