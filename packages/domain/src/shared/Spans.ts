import { Effect } from "effect"

/**
 * The span `Effect.fn(name)` opens, for functions on the inference path: `Effect.fn` also captures
 * a call-site stack on every call (an `Error` each time, ~35 µs per inference over its calls on a
 * small VM), which only a defect's pretty-printed cause would show. Use as
 * `Effect.fnUntraced(function*() {…}, hotSpan("Name.fn"))`; spans and their names are unchanged.
 */
export const hotSpan = (name: string) => Effect.withSpan(name, undefined, { captureStackTrace: false })
