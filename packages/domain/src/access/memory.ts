/** The access context's memory adapters, for tests only: `@podium/domain/access/memory` (the architecture test keeps them out of the packages' code). */
export * from "./BudgetLedgerMemory.ts"
export * from "./InviteRepositoryMemory.ts"
export * from "./WorkspaceRepositoryMemory.ts"
export * from "./WebSessionRepositoryMemory.ts"
