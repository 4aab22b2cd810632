/**
 * A target figure beside its reference, one line each after the table, as BENCHMARKS.md quotes them:
 * `name: podium X vs reference Y (ratio) target T: met`. Issue 30 names the targets.
 */
export interface Figure {
  readonly name: string
  /** Podium's value, with its unit. */
  readonly podium: string
  /** The reference's name and value, with its unit ("bare proxy 9048 req/s"). */
  readonly reference: string
  /** How the two compare: a ratio ("0.93x") or a difference ("+412 us"). */
  readonly comparison: string
  readonly target: string
  readonly met: boolean
  /** How the figure was taken (reps, connections), if it needs saying. */
  readonly how?: string
}

export const figureLine = (figure: Figure): string =>
  `${figure.name}: podium ${figure.podium} vs ${figure.reference} (${figure.comparison}) target ${figure.target}: ` +
  `${figure.met ? "met" : "NOT met"}${figure.how === undefined ? "" : ` [${figure.how}]`}`

/** `a / of` as "0.93x". */
export const times = (a: number, of: number): string => (of === 0 ? "-" : `${(a / of).toFixed(2)}x`)
