/** The datasets context's memory adapters, for tests only: `@podium/domain/datasets/memory` (the architecture test keeps them out of the packages' code). */
export * from "./DatasetRepositoryMemory.ts"
