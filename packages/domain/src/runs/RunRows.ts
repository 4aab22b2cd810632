import { promptInputOf } from "../datasets/index.ts"
import { isStorableText } from "../shared/index.ts"
import type { RunRow } from "./Run.ts"
import { sampleRows } from "./Sampling.ts"

export type MappedRow = Omit<RunRow, "index">

const referenceFields = ["expected", "answer", "output", "response", "completion"] as const

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A reference given as a number, a boolean or JSON (a class label, a structured answer) is its JSON text. */
const referenceOf = (row: Record<string, unknown>): string | null => {
  for (const field of referenceFields) {
    const value = row[field]
    if (value === undefined || value === null || value === "") continue
    return typeof value === "string" ? value : JSON.stringify(value)
  }
  return null
}

/**
 * A dataset's raw rows as a run asks them, each mapped by the contract's rule: the input is the first
 * of messages, input, prompt, question, query; the reference the first of expected, answer, output,
 * response, completion (a non-text reference as its JSON). Other fields, whatever their types, are
 * not looked at: a file's rows are not pushed rows. Rows without an input, or with text Postgres
 * cannot hold (U+0000, lone surrogates), are skipped.
 */
export const mapRows = (raw: ReadonlyArray<unknown>): { readonly rows: ReadonlyArray<MappedRow>; readonly skipped: number } => {
  const rows: Array<MappedRow> = []
  for (const value of raw) {
    if (!isRecord(value)) continue
    const prompt = promptInputOf(value)
    const messages = prompt.messages ?? []
    const lastUser = [...messages].reverse().find((m) => m.role === "user") ?? messages[messages.length - 1]
    const input = prompt.input ?? prompt.prompt ?? prompt.question ?? prompt.query ?? lastUser?.content
    if (input === undefined) continue
    const reference = referenceOf(value)
    const texts = [input, reference ?? "", ...messages.flatMap((m) => [m.role, m.content])]
    if (!texts.every(isStorableText)) continue
    rows.push({ prompt, input, reference })
  }
  return { rows, skipped: raw.length - rows.length }
}

/**
 * The rows a run asks: exact scoring needs a reference, so rows without one are left out; with
 * `sample`, a seeded sample of that many (the same seed on the same rows picks the same sample).
 */
export const chooseRows = (
  rows: ReadonlyArray<MappedRow>,
  options: { readonly exact: boolean; readonly sample: number | null; readonly seed: string | number }
): { readonly rows: ReadonlyArray<RunRow>; readonly available: number; readonly sampled: boolean } => {
  const usable = options.exact ? rows.filter((row) => row.reference !== null) : rows
  const sampled = options.sample !== null && usable.length > options.sample
  const chosen = sampled ? sampleRows(usable, options.sample!, options.seed) : usable
  return { rows: chosen.map((row, index) => ({ ...row, index })), available: usable.length, sampled }
}
