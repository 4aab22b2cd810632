/** The models context's memory adapters, for tests only: `@podium/domain/models/memory` (the architecture test keeps them out of the packages' code). */
export * from "./DeploymentHistoryMemory.ts"
export * from "./InferenceLogMemory.ts"
export * from "./ModelRepositoryMemory.ts"
