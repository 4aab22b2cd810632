/** The runs context's memory adapters, for tests only: `@podium/domain/runs/memory` (the architecture test keeps them out of the packages' code). */
export * from "./RunRepositoryMemory.ts"
