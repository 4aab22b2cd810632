#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit } from "effect"
import { CliError } from "effect/cli"
import { run } from "./Cli.ts"

/**
 * Expected failures (bad configuration, a refused command) are one line on stderr and exit code 1;
 * `podium eval`, a client for CI, exits 2 on a usage error (its own failures set their codes).
 */
const main = run.pipe(
  Effect.catch((error) =>
    Effect.andThen(
      CliError.isCliError(error) ? Effect.void : Console.error(`podium: ${error instanceof Error ? error.message : String(error)}`),
      Effect.sync(() => {
        process.exitCode = CliError.isCliError(error) && error._tag === "ShowHelp" && error.commandPath.includes("eval") ? 2 : 1
      })
    )
  )
)

NodeRuntime.runMain(main, {
  // SIGINT/SIGTERM interrupt the program; once its finalizers have run, that is a clean stop.
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? Number(process.exitCode ?? 0) : 1)
})
