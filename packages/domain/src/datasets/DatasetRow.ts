import { Result, Schema } from "effect"
import { InvalidInput, Uuid } from "../shared/index.ts"

/** A pushed row, as stored. */
export const DatasetRowId = Uuid.pipe(Schema.brand("DatasetRowId"))
export type DatasetRowId = typeof DatasetRowId.Type

/** The rows of one push, stored together. */
export const DatasetBatchId = Uuid.pipe(Schema.brand("DatasetBatchId"))
export type DatasetBatchId = typeof DatasetBatchId.Type

/** At most this many rows in one push request (413 beyond). */
export const maxRowsPerPush = 10_000

/** At most this many bytes in one push request (413 beyond). */
export const maxPushBytes = 10 * 1024 * 1024

/** A row's own `id` (for idempotent retries) is at most this long. */
export const maxClientIdLength = 256

/** Rejections listed in a push answer; the rest are only counted. */
export const maxListedRejections = 100

/** Why one row of a push was not accepted. */
export interface Rejection {
  readonly index: number
  readonly code: "invalid_row" | "missing_input" | "unstorable_text" | "event_limit_exceeded"
  readonly message: string
}

/** A pushed row that passed the rules, as it is stored. */
export interface AcceptedRow {
  /** The row's own `id`, when it has one: a retry with the same id is stored once. */
  readonly clientId: string | null
  /** The row as pushed, every field kept, as JSON text. */
  readonly json: string
  /** The input when it is text (`input`, `prompt`, `question` or `query`); null when it is `messages`. */
  readonly input: string | null
  /** The reference: the first non-empty of expected, answer, output, response, completion. */
  readonly reference: string | null
}

const stringFields = [
  "id", "input", "prompt", "question", "query", "output", "expected", "response", "completion", "answer", "rubric",
  "trace_id", "session_id", "user_id"
] as const
const inputFields = ["input", "prompt", "question", "query"] as const

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isText = (value: unknown) => value === undefined || value === null || typeof value === "string"
const isNumber = (value: unknown) => value === undefined || value === null || (typeof value === "number" && Number.isFinite(value))
const isString = (value: unknown) => typeof value === "string"

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

/** The first non-empty text among the values, in order. */
const firstText = (a: unknown, b: unknown, c: unknown, d: unknown, e?: unknown): string | undefined =>
  nonEmpty(a) ? a : nonEmpty(b) ? b : nonEmpty(c) ? c : nonEmpty(d) ? d : nonEmpty(e) ? e : undefined

/**
 * In JSON text as `JSON.stringify` writes it, U+0000 and lone surrogates are the only characters it
 * escapes as `\u0000` and `\udXXX`; an escape counts only after an even number of backslashes.
 */
const unstorableEscape = /(?<!\\)(?:\\\\)*\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/

const reject = (index: number, code: Rejection["code"], message: string): Result.Result<AcceptedRow, Rejection> =>
  Result.fail({ index, code, message })

/**
 * The shape rule of one field, or undefined when it holds. A push holds up to 10,000 rows, so each
 * field is read once and by name (rows of one push share a shape, and so one fast load per field).
 */
const fieldIssue = (row: Record<string, unknown>): string | undefined => {
  const { id, input, prompt, question, query, output, expected, response, completion, answer, rubric } = row
  const { trace_id, session_id, user_id, messages, metadata, tags, latency_ms, cost_usd } = row
  if (
    !(isText(id) && isText(input) && isText(prompt) && isText(question) && isText(query) && isText(output) &&
      isText(expected) && isText(response) && isText(completion) && isText(answer) && isText(rubric) &&
      isText(trace_id) && isText(session_id) && isText(user_id))
  ) {
    return `${stringFields.find((field) => !isText(row[field]))} must be a string`
  }
  if (messages !== undefined && messages !== null && (!Array.isArray(messages) || !messages.every(isRecord))) {
    return "messages must be an array of objects"
  }
  if (metadata !== undefined && metadata !== null && !isRecord(metadata)) return "metadata must be an object"
  if (tags !== undefined && tags !== null && (!Array.isArray(tags) || !tags.every(isString))) {
    return "tags must be an array of strings"
  }
  if (!isNumber(latency_ms)) return "latency_ms must be a number"
  if (!isNumber(cost_usd)) return "cost_usd must be a number"
  if (typeof id === "string" && id.length > maxClientIdLength) return `id must be at most ${maxClientIdLength} characters`
  return undefined
}

/**
 * One pushed row, checked: an object whose known fields have the spec's types, with an input (the
 * first of a non-empty `messages`, `input`, `prompt`, `question`, `query`) and only text Postgres can
 * store. Unknown fields are kept as they are.
 */
export const parseRow = (value: unknown, index: number): Result.Result<AcceptedRow, Rejection> => {
  if (!isRecord(value)) return reject(index, "invalid_row", "A row must be a JSON object")
  const issue = fieldIssue(value)
  if (issue !== undefined) return reject(index, "invalid_row", issue)
  const { id, messages, input, prompt, question, query, expected, answer, output, response, completion } = value
  const hasMessages = Array.isArray(messages) && messages.length > 0
  const text = hasMessages ? null : firstText(input, prompt, question, query)
  if (text === undefined) {
    return reject(index, "missing_input", "A row needs an input: messages, input, prompt, question or query")
  }
  const json = JSON.stringify(value)
  if (json.includes("\\u") && unstorableEscape.test(json)) {
    return reject(index, "unstorable_text", "A row may not hold U+0000 or lone surrogates")
  }
  return Result.succeed({
    clientId: typeof id === "string" && id !== "" ? id : null,
    json,
    input: text,
    reference: firstText(expected, answer, output, response, completion) ?? null
  })
}

/**
 * The rows of a push body: one row, an array of rows, or an object with any of `rows`, `events` and
 * `samples` (each an array, taken in that order). An object with none of those, or with an input of
 * its own (`messages`, `input`, `prompt`, `question`, `query`), is one row: its `events` is a field.
 */
export const rowsOf = (body: unknown): Result.Result<ReadonlyArray<unknown>, InvalidInput> => {
  if (Array.isArray(body)) return Result.succeed(body)
  if (!isRecord(body)) {
    return Result.fail(new InvalidInput({ message: "Send a row, an array of rows, or {rows|events|samples}", path: ["payload"] }))
  }
  const lists = (["rows", "events", "samples"] as const).filter((key) => body[key] !== undefined)
  const isRow = body["messages"] !== undefined || inputFields.some((field) => body[field] !== undefined)
  if (lists.length === 0 || isRow) return Result.succeed([body])
  const rows: Array<unknown> = []
  for (const key of lists) {
    const list = body[key]
    if (!Array.isArray(list)) return Result.fail(new InvalidInput({ message: `${key} must be an array of rows`, path: ["payload", key] }))
    for (const row of list) rows.push(row)
  }
  return Result.succeed(rows)
}

/** The rows of a push, split into those that pass the rules and the rejections (in row order). */
export const parseRows = (rows: ReadonlyArray<unknown>) => {
  const accepted: Array<AcceptedRow & { index: number }> = []
  const rejected: Array<Rejection> = []
  for (let index = 0; index < rows.length; index++) {
    const parsed = parseRow(rows[index], index)
    if (Result.isSuccess(parsed)) {
      const row = parsed.success as AcceptedRow & { index: number }
      row.index = index // the row was made just now: no copy
      accepted.push(row)
    } else {
      rejected.push(parsed.failure)
    }
  }
  return { accepted, rejected }
}
