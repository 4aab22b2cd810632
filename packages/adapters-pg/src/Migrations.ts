import { PgMigrator } from "@effect/sql-pg"
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import workspaces from "./migrations/0001_workspaces.ts"
import inviteMail from "./migrations/0002_invite_mail.ts"
import leaderboards from "./migrations/0003_leaderboards.ts"
import traces from "./migrations/0004_traces.ts"
import budgets from "./migrations/0005_budgets.ts"
import changeNotifications from "./migrations/0006_change_notifications.ts"
import humanEvaluation from "./migrations/0007_human_evaluation.ts"
import rankingWinner from "./migrations/0008_ranking_winner.ts"
import humanTallies from "./migrations/0009_human_tallies.ts"
import exactBudgets from "./migrations/0010_exact_budgets.ts"
import workspaceClientIds from "./migrations/0011_workspace_client_ids.ts"
import leaderboardVersion from "./migrations/0012_leaderboard_version.ts"
import datasets from "./migrations/0013_datasets.ts"
import runs from "./migrations/0014_runs.ts"
import datasetImprovements from "./migrations/0015_dataset_improvements.ts"
import models from "./migrations/0016_models.ts"
import fineTuneTraces from "./migrations/0017_fine_tune_traces.ts"
import modelInference from "./migrations/0018_model_inference.ts"
import deployments from "./migrations/0019_deployments.ts"
import sessionCopies from "./migrations/0020_session_copies.ts"
import priceTrust from "./migrations/0021_price_trust.ts"
import candidateModelUrl from "./migrations/0022_candidate_model_url.ts"
import inviteMailLogged from "./migrations/0023_invite_mail_logged.ts"
import servingHistory from "./migrations/0024_serving_history.ts"
import deploymentHistory from "./migrations/0025_deployment_history.ts"
import runSample from "./migrations/0026_run_sample.ts"
import webhookSecretAt from "./migrations/0027_webhook_secret_at.ts"
import integrationKeyHint from "./migrations/0028_integration_key_hint.ts"
import traceCancelled from "./migrations/0029_trace_cancelled.ts"
import webSessions from "./migrations/0030_web_sessions.ts"
import usageRollups from "./migrations/0031_usage_rollups.ts"

/** Every migration, in order. Never edit a landed one; add the next number. */
export const loader = PgMigrator.fromRecord({
  "0001_workspaces": workspaces,
  "0002_invite_mail": inviteMail,
  "0003_leaderboards": leaderboards,
  "0004_traces": traces,
  "0005_budgets": budgets,
  "0006_change_notifications": changeNotifications,
  "0007_human_evaluation": humanEvaluation,
  "0008_ranking_winner": rankingWinner,
  "0009_human_tallies": humanTallies,
  "0010_exact_budgets": exactBudgets,
  "0011_workspace_client_ids": workspaceClientIds,
  "0012_leaderboard_version": leaderboardVersion,
  "0013_datasets": datasets,
  "0014_runs": runs,
  "0015_dataset_improvements": datasetImprovements,
  "0016_models": models,
  "0017_fine_tune_traces": fineTuneTraces,
  "0018_model_inference": modelInference,
  "0019_deployments": deployments,
  "0020_session_copies": sessionCopies,
  "0021_price_trust": priceTrust,
  "0022_candidate_model_url": candidateModelUrl,
  "0023_invite_mail_logged": inviteMailLogged,
  "0024_serving_history": servingHistory,
  "0025_deployment_history": deploymentHistory,
  "0026_run_sample": runSample,
  "0027_webhook_secret_at": webhookSecretAt,
  "0028_integration_key_hint": integrationKeyHint,
  "0029_trace_cancelled": traceCancelled,
  "0030_web_sessions": webSessions,
  "0031_usage_rollups": usageRollups
})

/** Runs pending migrations in one transaction under a table lock, so concurrent starts are safe. */
export const runMigrations = PgMigrator.run({ loader, table: "podium_migrations" }).pipe(
  Effect.provide(NodeServices.layer)
)

export const layerMigrations = Layer.effectDiscard(runMigrations)
