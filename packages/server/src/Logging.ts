import { Layer, Logger, References } from "effect"
import type { PodiumConfig } from "./Config.ts"

/**
 * Said by the cluster's sync loop when it sees no healthy runner. Stopping, this instance leaves the
 * cluster before that loop is interrupted, and the loop may say it once more about the runner that
 * just left: on the way out it is no fault (the same line while serving is kept).
 */
const leftTheCluster = (message: unknown) =>
  (Array.isArray(message) ? message[0] : message) === "No healthy runners available"

/** Logs as JSON lines on stdout at `config.logLevel`; `stopping` says when the process is on its way out. */
export const layerLogging = (config: PodiumConfig, stopping: () => boolean = () => false) =>
  Layer.mergeAll(
    Logger.layer([
      Logger.make((options) => {
        if (stopping() && leftTheCluster(options.message)) return
        Logger.consoleJson.log(options)
      })
    ]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )

/** For one-shot commands: logs go to stderr, so stdout holds only the command's result. */
export const layerCommandLogging = (config: PodiumConfig) =>
  Layer.mergeAll(
    Logger.layer([Logger.withConsoleError(Logger.formatJson)]),
    Layer.succeed(References.MinimumLogLevel, config.logLevel)
  )
