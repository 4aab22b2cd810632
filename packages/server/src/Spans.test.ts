import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, References, Tracer } from "effect"
import { layerSpans } from "./App.ts"

const recorded: Array<string> = []
const recording = Layer.succeed(Tracer.Tracer, Tracer.make({
  span: (options) => {
    recorded.push(options.name)
    return new Tracer.NativeSpan(options)
  }
}))

const spanEnabled = Effect.gen(function*() {
  const enabled = yield* References.TracerEnabled
  const span = yield* Effect.currentSpan.pipe(Effect.withSpan("probe"), Effect.option)
  return { enabled, sampled: span._tag === "Some" && span.value.spanId !== "noop" }
})

describe("spans", () => {
  it.effect("are not built for Effect's native tracer, which has no backend", () =>
    Effect.gen(function*() {
      const { enabled, sampled } = yield* spanEnabled.pipe(Effect.provide(layerSpans))
      assert.isFalse(enabled)
      assert.isFalse(sampled)
    }))

  it.effect("are recorded for a tracer someone installed", () =>
    Effect.gen(function*() {
      recorded.length = 0
      const { enabled, sampled } = yield* spanEnabled.pipe(Effect.provide(layerSpans), Effect.provide(recording))
      assert.isTrue(enabled)
      assert.isTrue(sampled)
      assert.deepStrictEqual(recorded, ["probe"])
    }))
})
