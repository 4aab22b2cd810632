import { Effect, References } from "effect"

/**
 * The span `Effect.fn(name)` opens, for functions on the inference path: `Effect.fn` also captures
 * a call-site stack on every call (an `Error` each time, ~35 µs per inference over its calls on a
 * small VM), which only a defect's pretty-printed cause would show. Use as
 * `Effect.fnUntraced(function*() {…}, hotSpan("Name.fn"))`; spans and their names are unchanged.
 *
 * With tracing off (`References.TracerEnabled` false: no tracer was given) no span is opened at
 * all: Effect's no-op span still costs an object, a context overlay and an exit observer each, on
 * every call of the hottest path.
 */
export const hotSpan = (name: string) => {
  const span = Effect.withSpan(name, undefined, { captureStackTrace: false })
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? span(self) : self)
}
