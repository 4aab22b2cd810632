import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agreement, type Verdict } from "./Agreement.ts"

/** `count` copies of one judge/human pair. */
const pairs = (count: number, judge: Verdict, human: Verdict) => Array.from({ length: count }, () => ({ judge, human }))

const verdict = fc.constantFrom<Verdict>("correct", "incorrect")
const somePairs = fc.array(fc.record({ judge: verdict, human: verdict }), { minLength: 1, maxLength: 200 })

describe("agreement", () => {
  it("computes kappa and its interval for a worked 2×2 table", () => {
    // judge correct: 20 with the human, 5 against; judge incorrect: 10 against, 15 with. n = 50.
    const table = [
      ...pairs(20, "correct", "correct"),
      ...pairs(5, "correct", "incorrect"),
      ...pairs(10, "incorrect", "correct"),
      ...pairs(15, "incorrect", "incorrect")
    ]
    const po = (20 + 15) / 50 // 0.7
    const judgeCorrect = 25 / 50 // 0.5
    const humanCorrect = 30 / 50 // 0.6
    const pe = judgeCorrect * humanCorrect + (1 - judgeCorrect) * (1 - humanCorrect) // 0.3 + 0.2 = 0.5
    const kappa = (po - pe) / (1 - pe) // 0.4
    const se = Math.sqrt((0.7 * 0.3) / (50 * 0.5 * 0.5)) // sqrt(0.0168) ≈ 0.1296
    const result = agreement(table)
    expect(result.n).toBe(50)
    expect(result.percent_agreement).toBeCloseTo(70, 10)
    expect(result.kappa).toBeCloseTo(0.4, 10)
    expect(kappa).toBeCloseTo(0.4, 10)
    expect(result.kappa_low).toBeCloseTo(0.4 - 1.96 * se, 10)
    expect(result.kappa_high).toBeCloseTo(0.4 + 1.96 * se, 10)
    expect(result.kappa_low).toBeCloseTo(0.1460, 4)
    expect(result.kappa_high).toBeCloseTo(0.6540, 4)
    expect(result.confusion).toEqual({
      judge_correct_human_correct: 20,
      judge_correct_human_incorrect: 5,
      judge_incorrect_human_correct: 10,
      judge_incorrect_human_incorrect: 15
    })
  })

  it("has no figures without pairs", () => {
    expect(agreement([])).toEqual({
      n: 0,
      percent_agreement: null,
      kappa: null,
      kappa_low: null,
      kappa_high: null,
      confusion: {
        judge_correct_human_correct: 0,
        judge_correct_human_incorrect: 0,
        judge_incorrect_human_correct: 0,
        judge_incorrect_human_incorrect: 0
      }
    })
  })

  it("has no kappa when both raters gave one and the same verdict throughout", () => {
    for (const v of ["correct", "incorrect"] as const) {
      const result = agreement(pairs(7, v, v))
      expect([result.n, result.percent_agreement, result.kappa, result.kappa_low, result.kappa_high]).toEqual([7, 100, null, null, null])
    }
  })

  it("is zero when each rater is constant but they disagree, and at chance level", () => {
    expect(agreement(pairs(4, "correct", "incorrect"))).toMatchObject({ percent_agreement: 0, kappa: 0 })
    const chance = agreement([
      ...pairs(1, "correct", "correct"),
      ...pairs(1, "correct", "incorrect"),
      ...pairs(1, "incorrect", "correct"),
      ...pairs(1, "incorrect", "incorrect")
    ])
    expect(chance).toMatchObject({ percent_agreement: 50, kappa: 0 })
  })

  it("is −1 for complete disagreement with both verdicts balanced", () => {
    const result = agreement([...pairs(3, "correct", "incorrect"), ...pairs(3, "incorrect", "correct")])
    expect(result.kappa).toBe(-1)
    expect([result.kappa_low, result.kappa_high]).toEqual([-1, -1])
  })

  it("is 1 with a zero-width interval for perfect agreement when both verdicts occur", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), (right, wrong) => {
      const result = agreement([...pairs(right, "correct", "correct"), ...pairs(wrong, "incorrect", "incorrect")])
      expect([result.kappa, result.kappa_low, result.kappa_high, result.percent_agreement]).toEqual([1, 1, 1, 100])
    }))
  })

  it("kappa lies in [−1, 1] inside its interval, and the counts add up to n", () => {
    fc.assert(fc.property(somePairs, (input) => {
      const result = agreement(input)
      const { confusion } = result
      expect(
        confusion.judge_correct_human_correct + confusion.judge_correct_human_incorrect +
          confusion.judge_incorrect_human_correct + confusion.judge_incorrect_human_incorrect
      ).toBe(input.length)
      expect(result.n).toBe(input.length)
      expect(result.percent_agreement).toBeCloseTo(100 * input.filter((p) => p.judge === p.human).length / input.length, 10)
      if (result.kappa === null) {
        expect(new Set(input.flatMap((p) => [p.judge, p.human])).size).toBe(1)
        return
      }
      expect(-1 <= result.kappa_low! && result.kappa_low! <= result.kappa).toBe(true)
      expect(result.kappa <= result.kappa_high! && result.kappa_high! <= 1).toBe(true)
    }))
  })

  it("does not depend on which rater is which", () => {
    fc.assert(fc.property(somePairs, (input) => {
      const swapped = agreement(input.map((p) => ({ judge: p.human, human: p.judge })))
      const result = agreement(input)
      expect(swapped.kappa).toBe(result.kappa)
      expect(swapped.confusion.judge_correct_human_incorrect).toBe(result.confusion.judge_incorrect_human_correct)
    }))
  })
})
