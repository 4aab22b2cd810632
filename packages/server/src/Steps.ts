import { Cause, Effect, Schedule } from "effect"

/**
 * A workflow step that died (the database went away, say) is tried again, eight times over about
 * four minutes, before its job fails: a dropped connection must not fail work that has paid for
 * its answers. Every step it wraps must be safe to repeat; failures the step names are not retried.
 */
export const persistent = <A, E>(step: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  step.pipe(
    Effect.sandbox,
    Effect.retry({
      schedule: Schedule.exponential("1 second"),
      times: 8,
      while: (cause) => Cause.hasDies(cause) && !Cause.hasFails(cause) && !Cause.hasInterrupts(cause)
    }),
    Effect.catch(Effect.failCause)
  )

/** As `persistent`, without a limit: for the step that ends a job (a job left active would hold what it works on). */
export const untilLanded = <A>(step: Effect.Effect<A>): Effect.Effect<A> =>
  step.pipe(
    Effect.sandbox,
    Effect.retry({ schedule: Schedule.spaced("10 seconds"), while: (cause) => Cause.hasDies(cause) && !Cause.hasInterrupts(cause) }),
    Effect.catch(Effect.failCause)
  )
