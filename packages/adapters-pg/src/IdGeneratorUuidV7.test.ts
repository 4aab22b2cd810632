import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeUuidV7 } from "./IdGeneratorUuidV7.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("UUIDv7", () => {
  it("is a version 7, variant 10 UUID carrying the millisecond", () => {
    const id = makeUuidV7()(Date.UTC(2026, 10, 21, 10))
    expect(id).toMatch(uuid)
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 21, 10))
  })

  it("property: ids sort in the order they were made, within a millisecond and when the clock steps back", () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 6000 }), (steps) => {
      const next = makeUuidV7()
      let ms = Date.UTC(2026, 0, 1)
      let previous = ""
      for (const step of steps) {
        ms += step
        const id = next(ms)
        expect(id).toMatch(uuid)
        expect(id > previous).toBe(true)
        previous = id
      }
    }), { numRuns: 30 })
  })
})
