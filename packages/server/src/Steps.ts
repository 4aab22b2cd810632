import { Cause, Effect, Schedule, type Schema } from "effect"
import { Activity, type Workflow, WorkflowEngine } from "effect/workflow"

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

/**
 * The reason a failed job records: what `known` says of the error the cause is about (an error the
 * steps name), else `internal:` and the first line of its message.
 */
export const reasonOf = (known: (error: unknown) => string | undefined) => (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return known(error) ?? `internal: ${error instanceof Error ? error.message : String(error)}`.split("\n")[0]!
}

/**
 * A workflow's `work`, then, if it failed (not if it was interrupted: a suspended workflow resumes
 * later), its "fail" step, which records the reason the cause gives, tried as `retry` says
 * (until it lands, unless told otherwise: a job left active would hold what it works on).
 */
export const orFail = <E, R>(
  work: Effect.Effect<void, E, R>,
  fail: (reason: string) => Effect.Effect<void>,
  reason: (cause: Cause.Cause<E>) => string,
  retry: (step: Effect.Effect<void>) => Effect.Effect<void> = untilLanded
) =>
  work.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Activity.make({ name: "fail", execute: retry(fail(reason(cause))) })
    )
  )

/**
 * Workflows started through the engine at hand, for the ports whose work is a workflow: `enqueue`
 * returns once the execution is stored (the workflow runs later, durably), `run` waits for its end.
 */
export const workflows = Effect.map(WorkflowEngine.WorkflowEngine, (engine) => {
  const on = <A, E, R>(execution: Effect.Effect<A, E, R>, span: string) =>
    execution.pipe(Effect.asVoid, Effect.provideService(WorkflowEngine.WorkflowEngine, engine), Effect.withSpan(span))
  return {
    enqueue: <P extends Workflow.AnyStructSchema, S extends Schema.Top, E extends Schema.Top>(
      workflow: Workflow.Workflow<string, P, S, E>,
      payload: P["~type.make.in"],
      span: string
    ) => on(workflow.execute(payload, { discard: true }), span),
    run: <P extends Workflow.AnyStructSchema, S extends Schema.Top, E extends Schema.Top>(
      workflow: Workflow.Workflow<string, P, S, E>,
      payload: P["~type.make.in"],
      span: string
    ) => on(workflow.execute(payload), span)
  }
})
