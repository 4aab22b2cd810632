/** The human context's memory adapters, for tests only: `@podium/domain/human/memory` (the architecture test keeps them out of the packages' code). */
export * from "./HumanCaseRepositoryMemory.ts"
