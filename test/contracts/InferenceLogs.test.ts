import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { InferenceLogReaderPg } from "@podium/adapters-pg/models/InferenceLogReaderPg"
import { InferenceLogWriterPg } from "@podium/adapters-pg/models/InferenceLogWriterPg"
import { ModelRepositoryPg } from "@podium/adapters-pg/models/ModelRepositoryPg"
import { WebhookOutboxPg } from "@podium/adapters-pg/models/WebhookOutboxPg"
import { WebhookRepositoryPg } from "@podium/adapters-pg/models/WebhookRepositoryPg"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import {
  FineTuneRepositoryMemory,
  InferenceLogsMemory,
  ModelRepositoryMemory,
  WebhookRepositoryMemory
} from "@podium/domain/models/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { inferenceLogsContract, inferenceLogsPostgresContract } from "./InferenceLogs.contract.ts"

inferenceLogsContract("memory", () =>
  Layer.mergeAll(
    InferenceLogsMemory.layer,
    WebhookRepositoryMemory.layer,
    ModelRepositoryMemory.layer.pipe(Layer.provide(Layer.merge(FineTuneRepositoryMemory.layer, LeaderboardRepositoryMemory.layer))),
    WorkspaceRepositoryMemory.layer
  ))

const postgres = () =>
  Layer.mergeAll(
    InferenceLogWriterPg.layer,
    InferenceLogReaderPg.layer,
    WebhookOutboxPg.layer,
    WebhookRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    ModelRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  )

inferenceLogsContract("Postgres", postgres)
inferenceLogsPostgresContract(postgres, InferenceLogWriterPg.layer)
