/** The leaderboards context's memory adapters, for tests only: `@podium/domain/leaderboards/memory` (the architecture test keeps them out of the packages' code). */
export * from "./LeaderboardRepositoryMemory.ts"
export * from "./ServingHistoryMemory.ts"
