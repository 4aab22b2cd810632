import { Result, Schema } from "effect"

/**
 * The rows of a GET dataset file (`dataset_url`): JSONL, a JSON array (or `{rows|data: [...]}`) or
 * CSV with a header row. Pure: the fetcher enforces the byte limit while it streams, then hands over
 * the text with the response's content type and the URL.
 */

/** A fetched file may be at most this many bytes. */
export const maxDatasetFileBytes = 50 * 1024 * 1024

/** A dataset file may hold at most this many rows. */
export const maxDatasetFileRows = 100_000

export type DatasetFormat = "jsonl" | "json" | "csv"

/** What the response says about the file, besides its text. */
export interface DatasetFileHints {
  readonly contentType?: string | undefined
  readonly url?: string | undefined
}

export interface DatasetFile {
  readonly format: DatasetFormat
  readonly rows: ReadonlyArray<Record<string, unknown>>
}

/** Why a file gives no rows; `line` (1-based) where one line or CSV record is at fault. */
export class DatasetFileError extends Schema.TaggedError<DatasetFileError>()("DatasetFileError", {
  reason: Schema.Literals(["empty", "too_large", "too_many_rows", "invalid_json", "invalid_shape", "invalid_row", "invalid_csv"]),
  message: Schema.String,
  line: Schema.optional(Schema.Int)
}) {}

type Parsed = Result.Result<DatasetFile, DatasetFileError>

const failure = (reason: DatasetFileError["reason"], message: string, line?: number): Parsed =>
  Result.fail(new DatasetFileError({ reason, message, line }))

const tooMany = (line?: number) =>
  failure("too_many_rows", `The dataset has more than ${maxDatasetFileRows.toLocaleString("en")} rows`, line)

// text/plain, application/octet-stream and unknown types say nothing: extension and sniffing decide.
const contentTypes: Record<string, DatasetFormat> = {
  "application/jsonl": "jsonl", "application/x-jsonl": "jsonl", "application/jsonlines": "jsonl",
  "application/x-jsonlines": "jsonl", "application/ndjson": "jsonl", "application/x-ndjson": "jsonl",
  "text/jsonl": "jsonl", "text/x-jsonl": "jsonl", "text/ndjson": "jsonl", "text/x-ndjson": "jsonl",
  "application/json": "json", "text/json": "json",
  "text/csv": "csv", "application/csv": "csv", "text/x-csv": "csv", "application/x-csv": "csv",
  "text/comma-separated-values": "csv"
}
const extensions: Record<string, DatasetFormat> = { jsonl: "jsonl", ndjson: "jsonl", json: "json", csv: "csv" }
const formatIn = (table: Record<string, DatasetFormat>, key: string) => Object.hasOwn(table, key) ? table[key] : undefined

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const hasRowsArray = (value: unknown) => isRecord(value) && (Array.isArray(value.rows) || Array.isArray(value.data))

/** `JSON.parse` as a Result, failing with the engine's message. */
const jsonOf = (text: string) => Result.try({ try: (): unknown => JSON.parse(text), catch: (e) => (e as Error).message })

/** Index of the first character that is not whitespace (a BOM counts as whitespace), or -1. */
const firstNonSpace = (text: string, from: number) => {
  const pattern = /\S/g
  pattern.lastIndex = from
  return pattern.exec(text)?.index ?? -1
}

const typeFormat = (contentType = ""): DatasetFormat | undefined => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return formatIn(contentTypes, type) ?? (type.endsWith("+json") ? "json" : undefined)
}

/** The extension of the URL path's last segment: not of the host, the query or the fragment. */
const extensionFormat = (url = ""): DatasetFormat | undefined => {
  const path = url.split(/[?#]/)[0]!.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "")
  return formatIn(extensions, /\.([^./]+)$/.exec(path)?.[1]?.toLowerCase() ?? "")
}

/**
 * A text starting with `{` is JSONL when its first line is a whole JSON value, except a file of that
 * one line holding a `rows` or `data` array, which is a JSON document; a first line that does not
 * parse is the start of a JSON document spread over lines. Only the first line is parsed, so a
 * JSONL file costs one row to sniff.
 */
const sniffObject = (head: string, start: number): DatasetFormat => {
  const end = head.indexOf("\n", start)
  const first = jsonOf(end === -1 ? head.slice(start) : head.slice(start, end))
  if (Result.isFailure(first)) return "json"
  const onlyLine = end === -1 || firstNonSpace(head, end) === -1
  return onlyLine && hasRowsArray(first.success) ? "json" : "jsonl"
}

/** The format by content type, then the URL path's extension, then the text's first characters. */
export const detectFormat = (input: DatasetFileHints & { readonly head: string }): DatasetFormat => {
  const declared = typeFormat(input.contentType) ?? extensionFormat(input.url)
  if (declared !== undefined) return declared
  const start = firstNonSpace(input.head, 0)
  const first = input.head[start]
  return first === "[" ? "json" : first === "{" ? sniffObject(input.head, start) : "csv"
}

const kindOf = (value: unknown) => value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`

const parseJsonl = (text: string): Parsed => {
  const rows: Array<Record<string, unknown>> = []
  for (let start = 0, line = 1; start < text.length; line++) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline
    const content = text.slice(start, end).trim() // also drops the BOM and a CRLF's CR
    start = end + 1
    if (content === "") continue
    if (rows.length === maxDatasetFileRows) return tooMany(line)
    const parsed = jsonOf(content)
    if (Result.isFailure(parsed)) return failure("invalid_json", `Line ${line} is not valid JSON: ${parsed.failure}`, line)
    const value = parsed.success
    if (!isRecord(value)) return failure("invalid_row", `Line ${line} is ${kindOf(value)}, not a JSON object`, line)
    rows.push(value)
  }
  return Result.succeed({ format: "jsonl", rows })
}

const parseJson = (text: string): Parsed => {
  const parsed = jsonOf(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  if (Result.isFailure(parsed)) return failure("invalid_json", `The file is not valid JSON: ${parsed.failure}`)
  const value = parsed.success
  const wrapper = isRecord(value) ? (["rows", "data"] as const).find((key) => Array.isArray(value[key])) : undefined
  const rows = wrapper === undefined ? value : (value as Record<string, unknown>)[wrapper]
  if (!Array.isArray(rows)) {
    return failure("invalid_shape", "A JSON dataset must be an array of rows or an object with a `rows` or `data` array")
  }
  if (rows.length > maxDatasetFileRows) return tooMany()
  const bad = rows.findIndex((row) => !isRecord(row))
  if (bad !== -1) {
    const where = wrapper === undefined ? `Item ${bad}` : `Item ${bad} of \`${wrapper}\``
    return failure("invalid_row", `${where} (0-based) is ${kindOf(rows[bad])}, not a JSON object`)
  }
  return Result.succeed({ format: "json", rows: rows as Array<Record<string, unknown>> })
}

/** `base`, else `base_2`, `base_3`, ...: the first that no other column has taken. */
const unique = (base: string, taken: Set<string>) => {
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`
  taken.add(name)
  return name
}

const [COMMA, QUOTE, CR, LF] = [44, 34, 13, 10]

/**
 * RFC 4180 with a header row. Header names are trimmed; a blank one is `column_N` (N the 1-based
 * column) and a repeated one `name_2`, `name_3`. A short record is padded with empty strings; fields
 * beyond the header are kept as `column_N` when not empty. Empty lines are skipped; `"ab"c` reads as
 * `abc`, as most readers do; a quote never closed is an error, since it would swallow the rest.
 */
const parseCsv = (text: string): Parsed => {
  const n = text.length
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0
  let line = 1
  const unquoted = () => {
    const from = pos
    for (let c = text.charCodeAt(pos); pos < n && c !== COMMA && c !== CR && c !== LF; c = text.charCodeAt(pos)) pos++
    return text.slice(from, pos)
  }
  const field = (): string | undefined => {
    if (text.charCodeAt(pos) !== QUOTE) return unquoted()
    let value = ""
    for (let from = pos + 1;;) {
      const close = text.indexOf("\"", from)
      if (close === -1) return undefined
      value += text.slice(from, close)
      if (text.charCodeAt(close + 1) !== QUOTE) {
        pos = close + 1
        break
      }
      value += "\""
      from = close + 2
    }
    line += (value.match(/\r\n?|\n/g) ?? []).length
    return value + unquoted()
  }
  const names: Array<string> = []
  const taken = new Set<string>()
  let headerWidth = -1
  const rows: Array<Record<string, unknown>> = []
  while (pos < n) {
    const c = text.charCodeAt(pos)
    if (c === CR || c === LF) {
      pos += c === CR && text.charCodeAt(pos + 1) === LF ? 2 : 1
      line++
      continue
    }
    const recordLine = line
    const fields: Array<string> = []
    for (;;) {
      const value = field()
      if (value === undefined) return failure("invalid_csv", `Line ${recordLine}: a quoted field is never closed`, recordLine)
      fields.push(value)
      if (text.charCodeAt(pos) !== COMMA) break
      pos++
    }
    if (text.charCodeAt(pos) === CR) pos++
    if (text.charCodeAt(pos) === LF) pos++
    line++
    if (headerWidth === -1) {
      fields.forEach((name, i) => names.push(unique(name.trim() === "" ? `column_${i + 1}` : name.trim(), taken)))
      headerWidth = names.length
      continue
    }
    if (rows.length === maxDatasetFileRows) return tooMany(recordLine)
    while (names.length < fields.length) names.push(unique(`column_${names.length + 1}`, taken))
    const entries = names.slice(0, headerWidth).map((name, i) => [name, fields[i] ?? ""])
    for (let i = headerWidth; i < fields.length; i++) if (fields[i] !== "") entries.push([names[i]!, fields[i]!])
    rows.push(Object.fromEntries(entries)) // not `row[name] = ...`: a `__proto__` column stays a column
  }
  return Result.succeed({ format: "csv", rows })
}

/** The rows of a dataset file, its format chosen by `detectFormat`. A file without rows is an error. */
export const parseDatasetFile = (text: string, hints: DatasetFileHints = {}): Parsed => {
  // Each UTF-16 unit is at least one UTF-8 byte: a backstop for the fetcher's byte limit.
  if (text.length > maxDatasetFileBytes) {
    return failure("too_large", `The file is larger than ${maxDatasetFileBytes / 1024 / 1024} MiB`)
  }
  if (firstNonSpace(text, 0) === -1) return failure("empty", "The file is empty")
  const format = detectFormat({ ...hints, head: text })
  const parsed = format === "jsonl" ? parseJsonl(text) : format === "json" ? parseJson(text) : parseCsv(text)
  return Result.isSuccess(parsed) && parsed.success.rows.length === 0
    ? failure("empty", `The ${format.toUpperCase()} file has no rows`)
    : parsed
}
