// @ts-check
/**
 * `npm run mutate`: mutation testing of the domain's pure rules (README, Development). Each mutant
 * of these files is run against the fast domain tests only (vitest.mutate.config.ts: unit and
 * property tests beside the code, no database); the run fails below 90% killed. Not in CI: it
 * takes tens of minutes on two cores.
 *
 * The files: rules, state machines, ranking, budgets, limits, assignment, scopes and training
 * data. Ports, schema-only files, use cases over ports and memory adapters are left out.
 *
 * @type {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts" },
  coverageAnalysis: "perTest",
  concurrency: 2,
  timeoutMS: 10_000,
  // Static mutants (module-level constants and schemas, evaluated once at import) need a fresh
  // module graph and every test per mutant: 15% of the mutants but 80% of the time. Ignored.
  ignoreStatic: true,
  mutate: [
    "packages/domain/src/access/ApiToken.ts",
    "packages/domain/src/access/Budget.ts",
    "packages/domain/src/access/Invite.ts",
    "packages/domain/src/access/Scope.ts",
    "packages/domain/src/datasets/EventLimits.ts",
    "packages/domain/src/human/CaseLifecycle.ts",
    "packages/domain/src/human/HumanRanking.ts",
    "packages/domain/src/inference/CallBudgets.ts",
    "packages/domain/src/leaderboards/Schedule.ts",
    "packages/domain/src/models/Assignment.ts",
    "packages/domain/src/models/FineTuneRun.ts",
    "packages/domain/src/models/TrainingData.ts",
    "packages/domain/src/runs/Agreement.ts",
    "packages/domain/src/runs/AutoSelect.ts",
    "packages/domain/src/runs/Ranking.ts",
    "packages/domain/src/runs/Sampling.ts",
    "packages/domain/src/runs/Scoring.ts"
  ],
  // The sandbox needs only the domain and the test config (node_modules is linked, not copied).
  // tsconfig.json stays out: Stryker would rewrite it through the TypeScript compiler API, which
  // TypeScript 7 no longer has, and the tests do not need it (types are stripped).
  ignorePatterns: ["/*", "!/packages", "/packages/*", "!/packages/domain", "!/package.json", "!/vitest.mutate.config.ts"],
  thresholds: { high: 95, low: 90, break: 90 },
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  incrementalFile: "reports/mutation/incremental.json",
  tempDirName: "reports/.stryker-tmp",
  cleanTempDir: "always"
}
