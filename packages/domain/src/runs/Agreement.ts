/**
 * How far an LLM judge can be trusted: its verdicts compared with a human's on the same answers.
 * Cohen's kappa rather than raw agreement alone, because a judge that calls everything correct
 * agrees often with a human on an easy dataset while telling them nothing.
 */

export type Verdict = "correct" | "incorrect"

export interface Confusion {
  readonly judge_correct_human_correct: number
  readonly judge_correct_human_incorrect: number
  readonly judge_incorrect_human_correct: number
  readonly judge_incorrect_human_incorrect: number
}

export interface Agreement {
  readonly n: number
  readonly percent_agreement: number | null
  readonly kappa: number | null
  readonly kappa_low: number | null
  readonly kappa_high: number | null
  readonly confusion: Confusion
}

/** z for a two-sided 95% interval, as the large-sample kappa interval is usually quoted. */
const z95 = 1.96

const clamp = (value: number) => Math.min(1, Math.max(-1, value))

/**
 * Agreement between judge and human: observed agreement po, agreement expected by chance pe from
 * each rater's own rates, kappa = (po − pe) / (1 − pe) and its 95% interval kappa ± 1.96·SE with the
 * large-sample SE = sqrt(po(1 − po) / (n(1 − pe)²)), clamped to [−1, 1]. Nothing without pairs;
 * no kappa when pe = 1 (both raters gave one and the same verdict throughout), where it is undefined.
 */
export const agreement = (pairs: ReadonlyArray<{ readonly judge: Verdict; readonly human: Verdict }>): Agreement => {
  const count = (judge: Verdict, human: Verdict) => pairs.filter((p) => p.judge === judge && p.human === human).length
  const confusion: Confusion = {
    judge_correct_human_correct: count("correct", "correct"),
    judge_correct_human_incorrect: count("correct", "incorrect"),
    judge_incorrect_human_correct: count("incorrect", "correct"),
    judge_incorrect_human_incorrect: count("incorrect", "incorrect")
  }
  const n = pairs.length
  if (n === 0) return { n, percent_agreement: null, kappa: null, kappa_low: null, kappa_high: null, confusion }
  const po = (confusion.judge_correct_human_correct + confusion.judge_incorrect_human_incorrect) / n
  const judgeCorrect = (confusion.judge_correct_human_correct + confusion.judge_correct_human_incorrect) / n
  const humanCorrect = (confusion.judge_correct_human_correct + confusion.judge_incorrect_human_correct) / n
  const pe = judgeCorrect * humanCorrect + (1 - judgeCorrect) * (1 - humanCorrect)
  // Stryker disable next-line ArithmeticOperator: equivalent (as `100 / po`), pe reaches 1 only when every verdict agrees (po is 1)
  if (pe >= 1) return { n, percent_agreement: 100 * po, kappa: null, kappa_low: null, kappa_high: null, confusion }
  const kappa = (po - pe) / (1 - pe)
  const se = Math.sqrt((po * (1 - po)) / (n * (1 - pe) ** 2))
  return {
    n,
    percent_agreement: 100 * po,
    kappa,
    kappa_low: clamp(kappa - z95 * se),
    kappa_high: clamp(kappa + z95 * se),
    confusion
  }
}
