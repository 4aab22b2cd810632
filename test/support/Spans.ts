import { Layer, Tracer } from "effect"

/**
 * A tracer that keeps every server span in `into`: how a test sees which requests the front door
 * answered (its spans carry `podium.front_door`) and which the router did.
 */
export const serverSpans = (into: Array<Tracer.Span>) =>
  Layer.succeed(Tracer.Tracer, Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      if (options.kind === "server") into.push(span)
      return span
    }
  }))
