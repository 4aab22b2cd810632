#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { run } from "./Cli.ts"

NodeRuntime.runMain(run)
