import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one worker on a two-core machine; the suite mostly waits on servers and
    // databases, so two files at a time halve its wall time without starving either.
    maxWorkers: 2,
    // Memory tests force a collection before they measure what is retained.
    execArgv: ["--expose-gc"]
  }
})
