import { defineConfig } from "vitest/config"

/**
 * The domain's fast unit and property tests alone (no database, no server, no web build): what
 * `npm run mutate` runs against each mutant of the domain's rule files (stryker.config.json).
 */
export default defineConfig({
  test: {
    include: ["packages/domain/src/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 1
  }
})
