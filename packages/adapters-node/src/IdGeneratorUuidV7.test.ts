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

  it("property: many ids at once are ids as next makes them, in order, and no two alike", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 9000 }), fc.integer({ min: -2, max: 2 }), (count, step) => {
      const next = makeUuidV7()
      const ms = Date.UTC(2026, 0, 1)
      const first = next(ms)
      const ids = next.many(ms + step, count)
      const last = next(ms + step)
      expect(ids).toHaveLength(count)
      expect(new Set([first, ...ids, last]).size).toBe(count + 2)
      let previous = first
      for (const id of [...ids, last]) {
        expect(id).toMatch(uuid)
        expect(id > previous).toBe(true)
        previous = id
      }
    }), { numRuns: 30 })
  })
})
