import { describe, expect, it } from "vitest"
import { addUsd, sumUsd } from "./Money.ts"

describe("sumUsd", () => {
  it("sums exactly where floats added one by one drift", () => {
    expect(sumUsd([0.01, 0.02, 0.02])).toBe(0.05)
    // as floats: 0.049999999999999996, 0.30000000000000004 and 0.9999999999999999
    expect([0.04, 0.005, 0.005].reduce((a, b) => a + b)).not.toBe(0.05)
    expect(sumUsd([0.04, 0.005, 0.005])).toBe(0.05)
    expect(sumUsd([0.1, 0.2])).toBe(0.3)
    expect(sumUsd(Array.from({ length: 10 }, () => 0.1))).toBe(1)
    expect(addUsd(0.1, 0.2)).toBe(0.3)
  })

  it("keeps per-token prices (a pico-dollar is the unit) and sums of none", () => {
    expect(sumUsd([])).toBe(0)
    // 123 tokens at $0.15 per million, three times
    expect(sumUsd([0.00001845, 0.00001845, 0.00001845])).toBe(0.00005535)
    expect(sumUsd([1e-12, 2e-12])).toBe(3e-12)
    expect(sumUsd([1234.56, 0.0000001])).toBe(1234.5600001)
  })
})
