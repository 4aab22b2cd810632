import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { hash32, sampleRows, seededRandom } from "./Sampling.ts"

const indexes = (n: number) => Array.from({ length: n }, (_, i) => i)

/** Rows that carry their index, so a sample shows which rows it took and in what order. */
const rows = fc.integer({ min: 0, max: 200 }).map(indexes)
const sizes = fc.integer({ min: 0, max: 250 })
const seeds = fc.string({ maxLength: 20 })

describe("sampleRows", () => {
  it("takes every row, in order, when the size covers them all", () => {
    expect(sampleRows(["a", "b", "c"], 3, "s")).toEqual(["a", "b", "c"])
    expect(sampleRows(["a", "b", "c"], 10, "s")).toEqual(["a", "b", "c"])
    expect(sampleRows([], 5, "s")).toEqual([])
    expect(sampleRows(["a", "b", "c"], 0, "s")).toEqual([])
  })

  it("takes `size` distinct rows of the input, in their original order", () => {
    fc.assert(fc.property(rows, sizes, seeds, (input, size, seed) => {
      const sample = sampleRows(input, size, seed)
      expect(sample).toHaveLength(Math.min(size, input.length))
      expect(new Set(sample).size).toBe(sample.length)
      for (const row of sample) expect(input).toContain(row)
      sample.slice(1).forEach((row, i) => expect(sample[i]!).toBeLessThan(row))
    }))
  })

  it("gives the same sample for the same rows, size and seed", () => {
    fc.assert(fc.property(rows, sizes, seeds, (input, size, seed) => {
      expect(sampleRows([...input], size, seed)).toEqual(sampleRows(input, size, seed))
    }))
    expect(sampleRows(indexes(100), 5, "run-42")).toEqual(sampleRows(indexes(100), 5, "run-42"))
  })

  it("gives different samples for different seeds, as a rule", () => {
    const samples = indexes(50).map((i) => JSON.stringify(sampleRows(indexes(100), 10, `seed-${i}`)))
    expect(new Set(samples).size).toBeGreaterThanOrEqual(49)
    expect(sampleRows(indexes(100), 10, "a")).not.toEqual(sampleRows(indexes(100), 10, "b"))
  })

  it("a stored seed chooses the same rows in every version: FNV-1a and mulberry32 as published", () => {
    // FNV-1a's published 32-bit test vectors
    expect(["", "a", "foobar"].map(hash32)).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968])
    // mulberry32's first outputs for this seed, as an independent implementation of both gives them
    const random = seededRandom("run-42")
    expect([random(), random(), random()].map((x) => x * 2 ** 32)).toEqual([1102675350, 349035638, 2708126655])
  })

  describe("with a run request's integer seed", () => {
    const dataset = indexes(100)

    it("the same seed chooses the same rows, in the same (dataset) order", () => {
      fc.assert(fc.property(sizes, fc.integer({ min: 0, max: 2 ** 31 - 1 }), (size, seed) => {
        const sample = sampleRows(dataset, size, seed)
        expect(sampleRows([...dataset], size, seed)).toEqual(sample)
        sample.slice(1).forEach((row, i) => expect(sample[i]!).toBeLessThan(row))
      }))
    })

    it("a different seed chooses different rows of a 100-row dataset", () => {
      expect(sampleRows(dataset, 10, 1)).not.toEqual(sampleRows(dataset, 10, 2))
      const samples = indexes(50).map((seed) => JSON.stringify(sampleRows(dataset, 10, seed)))
      expect(new Set(samples).size).toBeGreaterThanOrEqual(49)
    })

    it("a size at or past the dataset's takes every row, in order", () => {
      expect(sampleRows(dataset, 100, 7)).toEqual(dataset)
      expect(sampleRows(dataset, 500, 7)).toEqual(dataset)
    })

    it("the seed is mulberry32's state as published, so a recorded seed chooses the same rows in every version", () => {
      // an independent Python implementation of mulberry32 and of this partial Fisher–Yates gives
      // [2581720956, 1925393290, 3661312704] as seed 42's first outputs, and these samples
      expect(sampleRows(dataset, 5, 42)).toEqual([20, 45, 60, 67, 85])
      expect(sampleRows(dataset, 5, 2 ** 31 - 1)).toEqual([13, 15, 39, 41, 42])
      // the integer is the state itself, not the hash of its digits
      expect(sampleRows(dataset, 5, 42)).not.toEqual(sampleRows(dataset, 5, "42"))
    })
  })

  it("chooses every row about equally often across seeds", () => {
    const counts = indexes(10).map(() => 0)
    for (let s = 0; s < 2000; s++) {
      for (const i of sampleRows(indexes(10), 3, `seed-${s}`)) counts[i]!++
    }
    // Each row is expected 600 times, with a standard deviation of about 20.5: allow about five.
    for (const count of counts) expect(Math.abs(count - 600)).toBeLessThan(100)
  })
})
