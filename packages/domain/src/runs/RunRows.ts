import { Result } from "effect"
import { parseRow, promptInputOf } from "../datasets/index.ts"
import type { RunRow } from "./Run.ts"
import { sampleRows } from "./Sampling.ts"

export type MappedRow = Omit<RunRow, "index">

/**
 * A dataset's raw rows as a run asks them, each mapped as push rows are: the input is the first of
 * messages, input, prompt, question, query; the reference the first of expected, answer, output,
 * response, completion. Rows without an input (or with text Postgres cannot hold) are skipped.
 */
export const mapRows = (raw: ReadonlyArray<unknown>): { readonly rows: ReadonlyArray<MappedRow>; readonly skipped: number } => {
  const rows: Array<MappedRow> = []
  for (let i = 0; i < raw.length; i++) {
    const parsed = parseRow(raw[i], i)
    if (Result.isFailure(parsed)) continue
    const prompt = promptInputOf(raw[i] as Record<string, unknown>)
    const messages = prompt.messages ?? []
    const lastUser = [...messages].reverse().find((m) => m.role === "user") ?? messages[messages.length - 1]
    rows.push({ prompt, input: parsed.success.input ?? lastUser?.content ?? "", reference: parsed.success.reference })
  }
  return { rows, skipped: raw.length - rows.length }
}

/**
 * The rows a run asks: exact scoring needs a reference, so rows without one are left out; with
 * `sample`, a seeded sample of that many (the same seed on the same rows picks the same sample).
 */
export const chooseRows = (
  rows: ReadonlyArray<MappedRow>,
  options: { readonly exact: boolean; readonly sample: number | null; readonly seed: string }
): { readonly rows: ReadonlyArray<RunRow>; readonly available: number; readonly sampled: boolean } => {
  const usable = options.exact ? rows.filter((row) => row.reference !== null) : rows
  const sampled = options.sample !== null && usable.length > options.sample
  const chosen = sampled ? sampleRows(usable, options.sample!, options.seed) : usable
  return { rows: chosen.map((row, index) => ({ ...row, index })), available: usable.length, sampled }
}
