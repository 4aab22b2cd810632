/**
 * Reads human-evaluation uploads on Node. Supported formats: txt, md, csv, json and pdf, by media type:
 * - `application/pdf` (`%PDF-` at the start): the text of every page in order, pages separated by
 *   a blank line; parsed by pdf.js (through `unpdf`) in a worker thread, under limits on time,
 *   memory and text length (`DocumentReaderNodeOptions`); a PDF without text (scanned) is unsupported;
 * - `application/json` (name ends in `.json`; must parse as JSON): the text as uploaded;
 * - `text/csv` (`.csv`), `text/markdown` (`.md`, `.markdown`), `text/plain` (anything else, such
 *   as `.txt` or no extension): the text.
 * Text files must be UTF-8 without NUL bytes; a leading BOM is dropped. Everything else (images,
 * archives, Office files, other encodings) is `UnsupportedDocument`. The media type comes from the
 * bytes: the name only chooses among the text types, so a renamed binary is never read as text.
 */
import { UnsupportedDocument, limits, DocumentReader, type ReadDocument } from "@podium/domain/human"
import { Duration, Effect, Layer, Semaphore } from "effect"
import { createHash } from "node:crypto"
import { Worker } from "node:worker_threads"
import type { PdfJob, PdfReply } from "./DocumentReaderWorker.ts"

/** Limits on reading one PDF; the defaults suit production, tests lower them. */
export interface DocumentReaderNodeOptions {
  /** How long one PDF may take, worker start-up included. Default 10 seconds. */
  readonly pdfTimeout?: Duration.Input
  /**
   * Memory one PDF worker may use, in MiB (at least 64): its V8 heap, and the buffers pdf.js
   * inflates streams into, which the heap limit does not cover and a small file can blow up.
   * Default 512.
   */
  readonly pdfMemoryMb?: number
  /** PDFs parsed at once; more wait their turn (the time limit starts with the parse). Default 2. */
  readonly pdfConcurrency?: number
  /**
   * A PDF's text is read up to this many characters plus one, then reading stops: enough for the
   * caller to see that it is over its limit, without holding what a small compressed file can
   * expand to. Default `limits.documentText`.
   */
  readonly pdfMaxTextChars?: number
}

const pdfMagic = [0x25, 0x50, 0x44, 0x46, 0x2d] // "%PDF-"

const workerUrl = new URL("./DocumentReaderWorker.ts", import.meta.url)

export const makeDocumentReader = Effect.fnUntraced(function*(options: DocumentReaderNodeOptions = {}) {
  const timeout = options.pdfTimeout ?? Duration.seconds(10)
  const memoryMb = options.pdfMemoryMb ?? 512
  // Below a few MiB V8 cannot even start the worker, and that aborts the whole process.
  if (memoryMb < 64) return yield* Effect.die(new Error("DocumentReaderNode: pdfMemoryMb must be at least 64"))
  const maxTextChars = options.pdfMaxTextChars ?? limits.documentText
  const pdfs = yield* Semaphore.make(options.pdfConcurrency ?? 2)

  const readPdf = (name: string, bytes: Uint8Array) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        // An exact-size copy moved into the worker: the caller keeps its bytes, and a view into a
        // larger buffer does not send the whole buffer along.
        const copy = bytes.slice()
        const job: PdfJob = { bytes: copy, maxTextChars }
        const worker = new Worker(workerUrl, {
          workerData: job,
          transferList: [copy.buffer],
          resourceLimits: { maxOldGenerationSizeMb: memoryMb },
          stdout: true,
          stderr: true
        })
        // What pdf.js prints about a file it was handed is noise from untrusted input: drop it.
        worker.stdout.resume()
        worker.stderr.resume()
        return worker
      }),
      (worker) => Effect.raceFirst(awaitReply(name, worker), watchMemory(name, worker, memoryMb * 1024 * 1024)),
      (worker) => Effect.promise(() => worker.terminate())
    ).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(new UnsupportedDocument({ name, reason: "could not read the PDF in time" }))
      }),
      pdfs.withPermits(1)
    )

  const read = Effect.fn("DocumentReaderNode.read")(
    function*(name: string, bytes: Uint8Array): Effect.fn.Return<ReadDocument, UnsupportedDocument> {
      const sha256 = createHash("sha256").update(bytes).digest("hex")
      if (startsWith(bytes, pdfMagic)) {
        return { media_type: "application/pdf", text: yield* readPdf(name, bytes), sha256 }
      }
      const text = decodeText(bytes)
      if (text === undefined) return yield* new UnsupportedDocument({ name, reason: "not a PDF or UTF-8 text file" })
      const media_type = textMediaType(name)
      if (media_type === "application/json" && !isJson(text)) {
        return yield* new UnsupportedDocument({ name, reason: "not valid JSON" })
      }
      return { media_type, text, sha256 }
    }
  )

  return DocumentReader.of({ read })
})

/** The `DocumentReader` for Node; see the top of this file for what it reads. */
export const DocumentReaderNode = {
  layer: (options: DocumentReaderNodeOptions = {}): Layer.Layer<DocumentReader> =>
    Layer.effect(DocumentReader, makeDocumentReader(options))
}

const awaitReply = (name: string, worker: Worker) =>
  Effect.callback<string, UnsupportedDocument>((resume) => {
    const unsupported = (reason: string) => resume(Effect.fail(new UnsupportedDocument({ name, reason })))
    worker.once("message", (reply: PdfReply) =>
      reply._tag === "Text" ? resume(Effect.succeed(reply.text)) : unsupported(reply.reason))
    worker.once("error", (error: Error & { code?: string }) =>
      error.code === "ERR_WORKER_OUT_OF_MEMORY"
        ? unsupported(tooMuchMemory)
        // The worker failed before it could read anything (it catches every parse error): a broken deployment.
        : resume(Effect.die(error)))
    worker.once("exit", () => unsupported("could not read the PDF"))
  })

const tooMuchMemory = "the PDF needs too much memory to read"

/** The worker's heap limit does not cover ArrayBuffers (where pdf.js inflates streams): watch both. */
const watchMemory = (name: string, worker: Worker, limitBytes: number) =>
  Effect.gen(function*() {
    while (true) {
      const used = yield* Effect.promise(() =>
        worker.getHeapStatistics().then((heap) => heap.used_heap_size + heap.external_memory, () => 0)
      )
      if (used > limitBytes) return yield* new UnsupportedDocument({ name, reason: tooMuchMemory })
      yield* Effect.sleep("100 millis")
    }
  })

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>) =>
  bytes.length >= prefix.length && prefix.every((byte, i) => bytes[i] === byte)

// `TextDecoder` drops a leading BOM by default; `fatal` rejects anything that is not UTF-8.
const utf8 = new TextDecoder("utf-8", { fatal: true })

const decodeText = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

const textMediaType = (name: string) => {
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1)
  const dot = base.lastIndexOf(".")
  switch (dot === -1 ? "" : base.slice(dot + 1).toLowerCase()) {
    case "json":
      return "application/json"
    case "csv":
      return "text/csv"
    case "md":
    case "markdown":
      return "text/markdown"
    default:
      return "text/plain"
  }
}

/**
 * RFC 8259 syntax in one pass, without building the value: `JSON.parse` of a hostile 10 MiB file
 * (millions of nested or empty arrays) allocates hundreds of MiB and blocks the event loop for
 * seconds, only for the result to be thrown away. Agrees with `JSON.parse` (a property test checks).
 * The scanners below take a position and return the one after what they read, or -1.
 */
const isJson = (text: string): boolean => {
  // The open containers, innermost last: 1 for an object, 0 for an array.
  let open = new Uint8Array(64)
  let depth = 0
  let i = 0
  for (;;) {
    // A value.
    i = skipSpace(text, i)
    const c = text.charCodeAt(i)
    if (c === 0x7b || c === 0x5b) {
      i = skipSpace(text, i + 1)
      if (text.charCodeAt(i) === c + 2) i++ // `{}` or `[]`
      else {
        if (depth === open.length) {
          const grown = new Uint8Array(depth * 2)
          grown.set(open)
          open = grown
        }
        open[depth++] = c === 0x7b ? 1 : 0
        if (c === 0x7b && (i = scanKey(text, i)) === -1) return false
        continue
      }
    } else {
      i = c === 0x22
        ? scanString(text, i)
        : c === 0x74
        ? scanWord(text, i, "true")
        : c === 0x66
        ? scanWord(text, i, "false")
        : c === 0x6e
        ? scanWord(text, i, "null")
        : scanNumber(text, i)
      if (i === -1) return false
    }
    // What follows a value: `,` and another, or the end of its container, or of the text.
    for (;;) {
      i = skipSpace(text, i)
      if (depth === 0) return i === text.length
      const isObject = open[depth - 1] === 1
      const next = text.charCodeAt(i++)
      if (next === 0x2c) {
        if (isObject && (i = scanKey(text, i)) === -1) return false
        break
      }
      if (next !== (isObject ? 0x7d : 0x5d)) return false
      depth--
    }
  }
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39

const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

// The characters allowed after a backslash, other than `u`: " \ / b f n r t
const isEscape = (c: number) =>
  c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74

const skipSpace = (text: string, i: number) => {
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i
}

const scanDigits = (text: string, i: number) => {
  if (!isDigit(text.charCodeAt(i))) return -1
  while (isDigit(text.charCodeAt(++i)));
  return i
}

const scanString = (text: string, i: number) => {
  if (text.charCodeAt(i++) !== 0x22) return -1
  while (i < text.length) {
    const c = text.charCodeAt(i++)
    if (c === 0x22) return i
    if (c < 0x20) return -1
    if (c === 0x5c) {
      const escape = text.charCodeAt(i++)
      if (escape === 0x75) {
        for (const stop = i + 4; i < stop; i++) if (!isHex(text.charCodeAt(i))) return -1
      } else if (!isEscape(escape)) return -1
    }
  }
  return -1
}

const scanNumber = (text: string, i: number) => {
  if (text.charCodeAt(i) === 0x2d) i++
  i = text.charCodeAt(i) === 0x30 ? i + 1 : scanDigits(text, i)
  if (i !== -1 && text.charCodeAt(i) === 0x2e) i = scanDigits(text, i + 1)
  if (i !== -1 && (text.charCodeAt(i) === 0x65 || text.charCodeAt(i) === 0x45)) {
    const sign = text.charCodeAt(i + 1)
    i = scanDigits(text, sign === 0x2b || sign === 0x2d ? i + 2 : i + 1)
  }
  return i
}

const scanWord = (text: string, i: number, word: string) => text.startsWith(word, i) ? i + word.length : -1

// After `{` or `,` in an object: `"key" :`.
const scanKey = (text: string, i: number) => {
  i = scanString(text, skipSpace(text, i))
  if (i === -1) return -1
  i = skipSpace(text, i)
  return text.charCodeAt(i) === 0x3a ? i + 1 : -1
}
