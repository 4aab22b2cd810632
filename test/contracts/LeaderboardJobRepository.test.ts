import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { DatasetLabelRepositoryPg } from "@podium/adapters-pg/datasets/DatasetLabelRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { ImprovementRepositoryPg } from "@podium/adapters-pg/runs/ImprovementRepositoryPg"
import { DatasetLabelRepository, LabelJob, LabelJobId, labelJobView } from "@podium/domain/datasets"
import { Improvement, ImprovementId, ImprovementRepository, improvementView } from "@podium/domain/runs"
import { type DateTime, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { TestDatabase } from "../support/database.ts"
import { leaderboardJobRepositoryContract } from "./LeaderboardJobRepository.contract.ts"

/** A repository's Postgres adapter beside the leaderboards and workspaces its jobs belong to. */
const onPostgres = <R>(repository: Layer.Layer<R, never, SqlClient.SqlClient>) => () =>
  Layer.mergeAll(
    repository,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  )

// Postgres is each port's only adapter
leaderboardJobRepositoryContract("DatasetLabelRepository: Postgres", {
  store: Effect.gen(function*() {
    return yield* DatasetLabelRepository
  }),
  aJob: (leaderboard, id, created_at) =>
    new LabelJob({
      id: LabelJobId.make(id),
      leaderboard_id: leaderboard.id,
      base_version: 1,
      labeller: "labeller-model",
      status: "running",
      total: 3,
      labelled: 0,
      failed: 0,
      version: null,
      error: null,
      created_at,
      finished_at: null
    }),
  view: labelJobView
}, onPostgres(DatasetLabelRepositoryPg.layer))

leaderboardJobRepositoryContract("ImprovementRepository: Postgres", {
  store: Effect.gen(function*() {
    const jobs = yield* ImprovementRepository
    return { ...jobs, fail: (job: Improvement, error: string, now: DateTime.Utc) => jobs.fail(job.id, error, now) }
  }),
  aJob: (leaderboard, id, created_at) =>
    new Improvement({
      id: ImprovementId.make(id),
      leaderboard_id: leaderboard.id,
      status: "running",
      labeller: "router:labeller/model",
      replace_references: false,
      total: 0,
      improved: 0,
      failed: 0,
      version: null,
      error: null,
      created_at,
      finished_at: null
    }),
  view: improvementView
}, onPostgres(ImprovementRepositoryPg.layer))
