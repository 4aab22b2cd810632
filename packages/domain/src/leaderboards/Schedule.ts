import { Cron, DateTime, Option, Result } from "effect"
import { InvalidInput } from "../shared/index.ts"

/**
 * A leaderboard's run schedule: `{cron, timezone}` (5 fields, or 6 with seconds first; an IANA
 * zone, UTC by default) plus `next_run_at`, which the service keeps; `{}` is none. The scheduler
 * starts a run when `next_run_at` has passed, moving it to the next occurrence after now either way.
 */
export interface RunSchedule {
  readonly cron: string
  readonly timezone: string
  readonly next_run_at: string
}

const invalid = (message: string, field: string) => Result.fail(new InvalidInput({ message, path: ["schedule", field] }))

/** The first occurrence strictly after `after`. */
export const nextOccurrence = (schedule: Pick<RunSchedule, "cron" | "timezone">, after: DateTime.Utc): DateTime.Utc => {
  const cron = Result.getOrThrow(Cron.parse(schedule.cron, schedule.timezone))
  return DateTime.fromDateUnsafe(Cron.next(cron, DateTime.toDateUtc(after)))
}

/**
 * The schedule a PATCH asks for, with its next occurrence after `now`. Only `cron` and `timezone`
 * are read (a `next_run_at` sent is recomputed); a bad cron or zone is InvalidInput.
 */
export const scheduleOf = (
  input: Readonly<Record<string, unknown>>,
  now: DateTime.Utc
): Result.Result<RunSchedule | Record<string, never>, InvalidInput> => {
  const { cron, timezone } = input
  if (cron === undefined || cron === null) {
    return timezone === undefined || timezone === null ? Result.succeed({}) : invalid("A schedule needs a cron", "cron")
  }
  if (typeof cron !== "string" || !/^\S+(\s+\S+){4,5}$/.test(cron.trim())) {
    return invalid("cron must be a cron expression of 5 fields (or 6, seconds first)", "cron")
  }
  const zone = timezone === undefined || timezone === null ? "UTC" : timezone
  if (typeof zone !== "string" || Option.isNone(DateTime.zoneMakeNamed(zone))) {
    return invalid("timezone must be an IANA time zone name, e.g. Europe/Paris", "timezone")
  }
  // Stryker disable next-line MethodExpression: equivalent, Cron.parse ignores spaces around the fields
  const parsed = Cron.parse(cron.trim(), zone)
  if (Result.isFailure(parsed)) return invalid(`cron: ${parsed.failure.message}`, "cron")
  const schedule = { cron: cron.trim(), timezone: zone }
  // a cron that parses may still never fire ("0 0 31 2 *")
  const next = Result.try(() => nextOccurrence(schedule, now))
  return Result.isFailure(next)
    ? invalid("cron never fires", "cron")
    : Result.succeed({ ...schedule, next_run_at: DateTime.formatIso(next.success) })
}

/** The stored schedule, when the leaderboard has one. */
export const runScheduleOf = (schedule: Readonly<Record<string, unknown>>): Option.Option<RunSchedule> => {
  const { cron, timezone, next_run_at } = schedule
  return typeof cron === "string" && typeof timezone === "string" && typeof next_run_at === "string"
    ? Option.some({ cron, timezone, next_run_at })
    : Option.none()
}

/** Whether a due occurrence starts a run: not while paused or archived, nor after `end_date`. */
export const schedulesRuns = (
  leaderboard: { readonly status: string; readonly challenge: { readonly end_date: string | null } },
  now: DateTime.Utc
): boolean => {
  if (leaderboard.status === "paused" || leaderboard.status === "archived") return false
  // Stryker disable next-line ConditionalExpression: equivalent when false, DateTime.make(null) is None too
  const end = leaderboard.challenge.end_date === null ? Option.none() : DateTime.make(leaderboard.challenge.end_date)
  return Option.isNone(end) || DateTime.isLessThan(now, end.value)
}
