import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type DatasetFile,
  DatasetFileError,
  type DatasetFileHints,
  type DatasetFormat,
  detectFormat,
  maxDatasetFileBytes,
  maxDatasetFileRows,
  parseDatasetFile
} from "./DatasetFile.ts"

const parsed = (text: string, hints: DatasetFileHints = {}): DatasetFile => {
  const result = parseDatasetFile(text, hints)
  if (Result.isFailure(result)) throw new Error(`failed: ${result.failure.message}`)
  return result.success
}

const failed = (text: string, hints: DatasetFileHints = {}): DatasetFileError => {
  const result = parseDatasetFile(text, hints)
  if (Result.isSuccess(result)) throw new Error(`parsed as ${result.success.format}`)
  return result.failure
}

/** The error's fields without its stack, for `toEqual`. */
const fieldsOf = (error: DatasetFileError) => ({ reason: error.reason, message: error.message, line: error.line })

const sniff = (head: string) => detectFormat({ head })

describe("detectFormat", () => {
  it("a content type decides first, whatever its parameters, case, the extension or the text", () => {
    const cases: Array<[string, DatasetFormat]> = [
      ["application/jsonl", "jsonl"],
      ["application/x-jsonl", "jsonl"],
      ["application/jsonlines", "jsonl"],
      ["application/x-ndjson", "jsonl"],
      ["application/ndjson", "jsonl"],
      ["text/x-ndjson", "jsonl"],
      ["application/json", "json"],
      ["text/json", "json"],
      ["application/vnd.api+json", "json"],
      ["text/csv", "csv"],
      ["application/csv", "csv"],
      ["text/comma-separated-values", "csv"]
    ]
    for (const [type, format] of cases) {
      for (const contentType of [type, `${type.toUpperCase()}; charset=utf-8`, ` ${type} ;header=present`]) {
        for (const [url, head] of [["https://x.test/a.csv", "[1]"], ["https://x.test/a.json", "a,b"]] as const) {
          expect(detectFormat({ contentType, url, head })).toBe(format)
        }
      }
    }
  })

  it("text/plain, octet-stream, unknown and missing types leave it to the extension", () => {
    for (const contentType of ["text/plain", "text/plain; charset=utf-8", "application/octet-stream", "", "nonsense"]) {
      expect(detectFormat({ contentType, url: "https://x.test/data.jsonl", head: "a,b" })).toBe("jsonl")
    }
    expect(detectFormat({ url: "https://x.test/data.csv", head: "[1]" })).toBe("csv")
  })

  it("the URL path's extension decides next, ignoring case, query string and fragment", () => {
    const cases: Array<[string, DatasetFormat]> = [
      ["https://x.test/d/train.jsonl", "jsonl"],
      ["https://x.test/d/train.ndjson", "jsonl"],
      ["https://x.test/d/train.json", "json"],
      ["https://x.test/d/train.csv", "csv"],
      ["https://x.test/d/TRAIN.JSONL", "jsonl"],
      ["https://x.test/d/train.json?download=true&name=a.csv", "json"],
      ["https://x.test/d/train.csv#section.json", "csv"],
      ["http://user@x.test:8080/a.b/train.v2.jsonl?x=1", "jsonl"],
      ["/relative/path.csv", "csv"]
    ]
    for (const [url, format] of cases) {
      for (const head of ["[1]", "{\"a\": 1}", "a,b"]) expect(detectFormat({ url, head })).toBe(format)
    }
  })

  it("a URL without a known extension on its last path segment leaves it to sniffing", () => {
    for (const url of ["https://x.test/", "https://data.csv/", "https://data.csv", "https://x.test/json/rows", "https://x.test/a.txt"]) {
      expect(detectFormat({ url, head: "[1]" })).toBe("json")
      expect(detectFormat({ url, head: "input,expected" })).toBe("csv")
    }
  })

  it("sniffs `[` as JSON, after whitespace and a BOM", () => {
    expect(sniff("[{\"a\": 1}]")).toBe("json")
    expect(sniff("\uFEFF \r\n\t[")).toBe("json")
  })

  it("sniffs `{` as JSONL when the first line is a whole JSON value", () => {
    expect(sniff("{\"input\": \"a\"}\n{\"input\": \"b\"}\n")).toBe("jsonl")
    expect(sniff("\uFEFF{\"input\": \"a\"}\r\n{\"input\": \"b\"}")).toBe("jsonl")
    expect(sniff("{\"input\": \"a\"}")).toBe("jsonl")
    // Several lines: JSONL even when the first row happens to hold a `rows` array.
    expect(sniff("{\"rows\": [1]}\n{\"rows\": [2]}")).toBe("jsonl")
  })

  it("sniffs `{` as JSON when the file is one line holding `rows` or `data`, or spreads over lines", () => {
    expect(sniff("{\"rows\": [{\"input\": \"a\"}]}")).toBe("json")
    expect(sniff("{\"data\": []}\n\n")).toBe("json")
    expect(sniff("{\n  \"rows\": [\n    {\"input\": \"a\"}\n  ]\n}\n")).toBe("json")
    expect(sniff("{\"rows\": [\n{\"input\": \"a\"}]}")).toBe("json")
    // A one-line object whose `rows` is not an array is a JSONL row.
    expect(sniff("{\"rows\": 3}")).toBe("jsonl")
  })

  it("sniffs anything else as CSV", () => {
    for (const head of ["input,expected\na,b", "\"input\",x", "", "  ", "42", "<html>"]) expect(sniff(head)).toBe("csv")
  })
})

describe("parseDatasetFile: every format by every detection path", () => {
  const rows = [{ input: "What is 2+2?", expected: "4" }, { input: "Capital of France?", expected: "Paris" }]
  const files: Array<[DatasetFormat, string, string, string]> = [
    ["jsonl", rows.map((row) => JSON.stringify(row)).join("\n"), "application/x-ndjson", "https://x.test/a.jsonl"],
    ["json", JSON.stringify(rows), "application/json", "https://x.test/a.json"],
    ["csv", "input,expected\nWhat is 2+2?,4\nCapital of France?,Paris\n", "text/csv", "https://x.test/a.csv"]
  ]
  for (const [format, text, contentType, url] of files) {
    it(`${format} by content type, by extension and by sniffing`, () => {
      for (const hints of [{ contentType }, { contentType: "text/plain", url }, { url: "https://x.test/download" }, {}]) {
        expect(parsed(text, hints)).toEqual({ format, rows })
      }
    })
  }
})

describe("parseDatasetFile: JSONL", () => {
  const jsonl = { contentType: "application/jsonl" }

  it("skips blank lines and reads a BOM and CRLF line ends", () => {
    const text = "\uFEFF{\"input\": \"a\"}\r\n\r\n   \n{\"input\": \"b\", \"n\": [1, {\"x\": null}]}\r\n\t\n"
    expect(parsed(text, jsonl).rows).toEqual([{ input: "a" }, { input: "b", n: [1, { x: null }] }])
  })

  it("names the 1-based line of a line that is not JSON, blank lines counted", () => {
    const error = failed("{\"input\": \"a\"}\n\n{\"input\": \"b\"\n{\"input\": \"c\"}", jsonl)
    expect(error).toBeInstanceOf(DatasetFileError)
    expect(error.reason).toBe("invalid_json")
    expect(error.line).toBe(3)
    expect(error.message).toMatch(/^Line 3 is not valid JSON: /)
  })

  it("a line that is JSON but not an object is an invalid row naming its line", () => {
    const cases: Array<[string, string]> = [
      ["42", "a number"], ["\"text\"", "a string"], ["null", "null"], ["[{\"input\": \"a\"}]", "an array"], ["true", "a boolean"]
    ]
    for (const [line, kind] of cases) {
      expect(fieldsOf(failed(`{"input": "a"}\r\n${line}\r\n`, jsonl))).toEqual({
        reason: "invalid_row", message: `Line 2 is ${kind}, not a JSON object`, line: 2
      })
    }
  })
})

describe("parseDatasetFile: JSON", () => {
  const json = { contentType: "application/json" }

  it("reads an array, or an object's `rows` or `data` array, keeping every field", () => {
    const rows = [{ input: "a", meta: { k: [1, 2] } }, { prompt: "b", expected: null }]
    expect(parsed(JSON.stringify(rows), json).rows).toEqual(rows)
    expect(parsed(JSON.stringify({ rows, total: 2 }), json).rows).toEqual(rows)
    expect(parsed(JSON.stringify({ data: rows }, null, 2), json).rows).toEqual(rows)
    expect(parsed(`\uFEFF${JSON.stringify(rows)}`, json).rows).toEqual(rows)
  })

  it("prefers `rows` to `data`, and takes `data` when `rows` is not an array", () => {
    expect(parsed(JSON.stringify({ rows: [{ a: 1 }], data: [{ b: 2 }] }), json).rows).toEqual([{ a: 1 }])
    expect(parsed(JSON.stringify({ rows: "no", data: [{ b: 2 }] }), json).rows).toEqual([{ b: 2 }])
  })

  it("text that is not JSON is invalid_json, without a line", () => {
    const error = failed("[{\"input\": \"a\"},", json)
    expect(error.reason).toBe("invalid_json")
    expect(error.line).toBeUndefined()
    expect(error.message).toMatch(/^The file is not valid JSON: /)
  })

  it("anything but an array or an object with a rows array is invalid_shape", () => {
    for (const text of ["{\"input\": \"a\"}", "{\"rows\": {\"a\": 1}}", "42", "\"rows\"", "null", "true"]) {
      expect(fieldsOf(failed(text, json))).toEqual({
        reason: "invalid_shape",
        message: "A JSON dataset must be an array of rows or an object with a `rows` or `data` array",
        line: undefined
      })
    }
  })

  it("an item that is not an object is an invalid row naming its 0-based index", () => {
    expect(fieldsOf(failed("[{\"a\": 1}, {\"a\": 2}, 3]", json))).toEqual({
      reason: "invalid_row", message: "Item 2 (0-based) is a number, not a JSON object", line: undefined
    })
    expect(failed("{\"data\": [[1]]}", json).message).toBe("Item 0 of `data` (0-based) is an array, not a JSON object")
    expect(failed("{\"rows\": [{}, null]}", json).message).toBe("Item 1 of `rows` (0-based) is null, not a JSON object")
  })
})

describe("parseDatasetFile: CSV", () => {
  const csv = (text: string) => parsed(text, { contentType: "text/csv" }).rows

  it("reads RFC 4180: quoted fields, doubled quotes, commas and line breaks inside quotes, CRLF", () => {
    const text = "input,expected\r\n\"Say \"\"hi\"\", please\",\"a,b\"\r\n\"two\r\nlines\",\"x\ny\"\r\n"
    expect(csv(text)).toEqual([{ input: "Say \"hi\", please", expected: "a,b" }, { input: "two\r\nlines", expected: "x\ny" }])
  })

  it("values are strings, kept as written; header names are trimmed", () => {
    expect(csv("\uFEFF input , n ,flag\n  padded  ,42,true\n")).toEqual([{ input: "  padded  ", n: "42", flag: "true" }])
  })

  it("reads LF, CRLF and lone CR line ends, skipping empty lines", () => {
    expect(csv("a,b\r\r\n1,2\r3,4\n\n\n5,6")).toEqual([{ a: "1", b: "2" }, { a: "3", b: "4" }, { a: "5", b: "6" }])
  })

  it("keeps a quoted empty line as a row and empty fields as empty strings", () => {
    expect(csv("a\n\"\"\nx\n")).toEqual([{ a: "" }, { a: "x" }])
    expect(csv("a,b\n,\n")).toEqual([{ a: "", b: "" }])
  })

  it("names blank header columns column_N and repeated ones name_2, name_3, never reusing a name", () => {
    expect(csv("a,,a, a ,a_2,\n1,2,3,4,5,6")).toEqual([
      { a: "1", column_2: "2", a_2: "3", a_3: "4", a_2_2: "5", column_6: "6" }
    ])
  })

  it("pads a short record with empty strings and keeps non-empty extra fields as column_N", () => {
    expect(csv("a,b,column_4\n1\n1,2,3,4,,6\n1,2,3,\n")).toEqual([
      { a: "1", b: "", column_4: "" },
      { a: "1", b: "2", column_4: "3", column_4_2: "4", column_6: "6" },
      { a: "1", b: "2", column_4: "3" }
    ])
  })

  it("reads text after a closing quote into the field, as most readers do", () => {
    expect(csv("a,b\n\"ab\"c,\"x\" \n")).toEqual([{ a: "abc", b: "x " }])
    expect(csv("a\nit's \"quoted\" inside\n")).toEqual([{ a: "it's \"quoted\" inside" }])
  })

  it("a `__proto__` column is an ordinary column, not the row's prototype", () => {
    const [row] = csv("__proto__,input\nx,y\n")
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
    expect(Object.keys(row!)).toEqual(["__proto__", "input"])
    expect(JSON.stringify(row)).toBe("{\"__proto__\":\"x\",\"input\":\"y\"}")
  })

  it("a quoted field never closed is invalid_csv at the line where the record starts", () => {
    expect(fieldsOf(failed("a,b\n\"x\ny\",1\r\n2,\"open\n\nrest", { contentType: "text/csv" }))).toEqual({
      reason: "invalid_csv", message: "Line 4: a quoted field is never closed", line: 4
    })
  })
})

describe("parseDatasetFile: limits and empty files", () => {
  it("a file without rows is empty, in every format", () => {
    const cases: Array<[string, DatasetFileHints, string]> = [
      ["", {}, "The file is empty"],
      ["  \r\n\t", { contentType: "application/json" }, "The file is empty"],
      ["\uFEFF", { contentType: "text/csv" }, "The file is empty"],
      ["input,expected\r\n", {}, "The CSV file has no rows"],
      ["[]", {}, "The JSON file has no rows"],
      ["{\"rows\": []}", {}, "The JSON file has no rows"],
      ["\n \n\r\n", { contentType: "application/jsonl" }, "The file is empty"]
    ]
    for (const [text, hints, message] of cases) {
      expect(fieldsOf(failed(text, hints))).toEqual({ reason: "empty", message, line: undefined })
    }
  })

  it("a text longer than the byte limit is too_large", () => {
    expect(fieldsOf(failed("x".repeat(maxDatasetFileBytes + 1), { contentType: "text/csv" }))).toEqual({
      reason: "too_large", message: "The file is larger than 50 MiB", line: undefined
    })
  })

  it("parses 100,000 rows of CSV and of JSONL", () => {
    const n = maxDatasetFileRows
    const csvText = ["input,expected", ...Array.from({ length: n }, (_, i) => `q${i},"a${i}"`)].join("\r\n")
    const fromCsv = parsed(csvText)
    expect(fromCsv.format).toBe("csv")
    expect(fromCsv.rows.length).toBe(n)
    expect(fromCsv.rows[n - 1]).toEqual({ input: `q${n - 1}`, expected: `a${n - 1}` })

    const jsonlText = Array.from({ length: n }, (_, i) => `{"input":"q${i}","expected":${i}}`).join("\n")
    const fromJsonl = parsed(jsonlText)
    expect(fromJsonl.format).toBe("jsonl")
    expect(fromJsonl.rows.length).toBe(n)
    expect(fromJsonl.rows[n - 1]).toEqual({ input: `q${n - 1}`, expected: n - 1 })
  })

  it("one row more than the limit is too_many_rows, at the line of that row where lines apply", () => {
    const n = maxDatasetFileRows + 1
    const message = "The dataset has more than 100,000 rows"
    const csvText = ["input", ...Array.from({ length: n }, (_, i) => `q${i}`)].join("\n")
    expect(fieldsOf(failed(csvText))).toEqual({ reason: "too_many_rows", message, line: n + 1 })
    const jsonlText = "\n" + Array.from({ length: n }, (_, i) => `{"i":${i}}`).join("\n")
    expect(fieldsOf(failed(jsonlText))).toEqual({ reason: "too_many_rows", message, line: n + 1 })
    const jsonText = JSON.stringify(Array.from({ length: n }, (_, i) => ({ i })))
    expect(fieldsOf(failed(jsonText))).toEqual({ reason: "too_many_rows", message, line: undefined })
    // Exactly the limit is fine.
    expect(parsed(csvText.slice(0, csvText.lastIndexOf("\n"))).rows.length).toBe(maxDatasetFileRows)
  })
})

/** A correct RFC 4180 writer: quotes what needs it (or everything), and a lone empty field as `""`. */
const writeCsv = (table: ReadonlyArray<ReadonlyArray<string>>, eol: string, quoteAll: boolean) =>
  table
    .map((record) =>
      record.length === 1 && record[0] === ""
        ? "\"\""
        : record.map((v) => quoteAll || /[",\r\n]/.test(v) ? `"${v.replaceAll("\"", "\"\"")}"` : v).join(",")
    )
    .join(eol)

const csvValue = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("a", " ", ",", "\"", "\r", "\n", "\r\n", "\uFEFF") })
)
const headerName = fc.string({ unit: "grapheme", minLength: 1 }).filter((name) => name.trim() === name && name !== "")
const csvTable = fc.integer({ min: 1, max: 5 }).chain((width) =>
  fc.record({
    header: fc.uniqueArray(headerName, { minLength: width, maxLength: width }),
    rows: fc.array(fc.array(csvValue, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 20 })
  })
)

/** JSON values as JSON text can hold them (`-0` becomes 0). */
const jsonObject = fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue({ maxDepth: 2 }))
  .map((row) => JSON.parse(JSON.stringify(row)) as Record<string, unknown>)

describe("parseDatasetFile: properties", () => {
  it("any table of strings written by an RFC 4180 writer reads back as the same rows", () => {
    fc.assert(fc.property(
      csvTable,
      fc.constantFrom("\n", "\r\n"),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      ({ header, rows }, eol, quoteAll, bom, trailingEol) => {
        const text = (bom ? "\uFEFF" : "") + writeCsv([header, ...rows], eol, quoteAll) + (trailingEol ? eol : "")
        const expected = rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])))
        expect(parsed(text, { contentType: "text/csv" })).toEqual({ format: "csv", rows: expected })
      }
    ))
  })

  it("any objects written one per line read back as JSONL, by content type or by sniffing", () => {
    fc.assert(fc.property(
      fc.array(jsonObject, { minLength: 2, maxLength: 20 }),
      fc.constantFrom("\n", "\r\n"),
      fc.array(fc.constantFrom("", " ", "\t"), { maxLength: 20 }),
      fc.boolean(),
      (rows, eol, blanks, bom) => {
        const lines = rows.flatMap((row, i) => blanks[i] === undefined ? [JSON.stringify(row)] : [JSON.stringify(row), blanks[i]])
        const text = (bom ? "\uFEFF" : "") + lines.join(eol)
        expect(parsed(text, { contentType: "application/jsonl" })).toEqual({ format: "jsonl", rows })
        expect(parsed(text)).toEqual({ format: "jsonl", rows })
      }
    ))
  })

  it("any array of objects, bare or under `rows` or `data`, compact or indented, reads back as JSON by sniffing", () => {
    fc.assert(fc.property(
      fc.array(jsonObject, { minLength: 1, maxLength: 20 }),
      fc.constantFrom<"bare" | "rows" | "data">("bare", "rows", "data"),
      fc.constantFrom(0, 2),
      (rows, wrapper, indent) => {
        const text = JSON.stringify(wrapper === "bare" ? rows : { [wrapper]: rows }, null, indent)
        expect(parsed(text)).toEqual({ format: "json", rows })
      }
    ))
  })

  it("never throws: any text with any hints gives rows of objects or a DatasetFileError", () => {
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.string({ unit: fc.constantFrom("{", "}", "[", "]", "\"", ",", ":", "\n", "\r", " ", "1", "a", "\uFEFF") })
    )
    const hints = fc.record({
      contentType: fc.option(fc.constantFrom("text/csv", "application/json", "application/jsonl", "text/plain"), { nil: undefined }),
      url: fc.option(fc.constantFrom("https://x.test/a.csv", "https://x.test/a.json", "https://x.test/a"), { nil: undefined })
    })
    fc.assert(fc.property(text, hints, (text, hints) => {
      const result = parseDatasetFile(text, hints)
      if (Result.isFailure(result)) {
        expect(result.failure).toBeInstanceOf(DatasetFileError)
      } else {
        expect(result.success.rows.length).toBeGreaterThan(0)
        for (const row of result.success.rows) expect(typeof row === "object" && row !== null && !Array.isArray(row)).toBe(true)
      }
    }), { numRuns: 500 })
  })
})
