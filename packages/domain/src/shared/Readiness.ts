import { Context, type Effect } from "effect"

/** Whether the service's dependencies answer; never fails, answers within a bounded time. */
export class Readiness extends Context.Service<Readiness, {
  readonly database: Effect.Effect<boolean>
}>()("@podium/domain/shared/Readiness") {}
