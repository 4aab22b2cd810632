import { Cause, Logger } from "effect"

/**
 * The server's log, tallied: each distinct line (level, message, first line of the cause) is
 * written to stderr the first time it appears and counted after that, so a benchmark can report
 * what the server complained about without a thousand identical lines burying the results.
 */
export class LogTally {
  private readonly counts = new Map<string, number>()
  private readonly shown = new Set<string>()
  private readonly source: string

  /** `source` names the server in the first-of-its-kind lines. */
  constructor(source: string) {
    this.source = source
  }

  readonly layer = Logger.layer([Logger.make((options) => {
    const message = Array.isArray(options.message) ? options.message.map(String).join(" ") : String(options.message)
    const cause = Cause.hasInterruptsOnly(options.cause) && options.cause.reasons.length > 0
      ? "interrupted"
      : Cause.pretty(options.cause).split("\n")[0] ?? ""
    const key = `${options.logLevel.toUpperCase()} ${message}${cause === "" ? "" : ` (${cause})`}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    if (!this.shown.has(key)) {
      this.shown.add(key)
      process.stderr.write(`  ${this.source} log, first of its kind: ${Logger.formatJson.log(options)}\n`)
    }
  })])

  reset(): void {
    this.counts.clear()
  }

  /** Lines logged since the last reset, by kind. */
  tally(): Record<string, number> {
    return Object.fromEntries(this.counts)
  }
}
