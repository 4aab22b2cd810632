/**
 * Runs in a `node:worker_threads` worker started by `DocumentReaderNode`: parses one untrusted PDF
 * so that a slow or hostile file can be cut off with `terminate()` without stalling the server's
 * event loop. Receives a `PdfJob` as its `workerData`, posts exactly one `PdfReply`.
 */
import { parentPort, workerData } from "node:worker_threads"
import { getDocumentProxy } from "unpdf"

/** The file, and how much text is enough (`pdfMaxTextChars`). */
export interface PdfJob {
  readonly bytes: Uint8Array
  readonly maxTextChars: number
}

export type PdfReply =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Unreadable"; readonly reason: string }

const port = parentPort
if (port === null) throw new Error("DocumentReaderWorker must run in a worker thread")

let replied = false
const reply = (message: PdfReply) => {
  if (replied) return
  replied = true
  port.postMessage(message)
}

// pdf.js reports the reason a file is unreadable by the exception's name; its messages are not for users.
const reasonOf = (error: unknown) => {
  switch (error instanceof Error ? error.name : undefined) {
    case "PasswordException":
      return "the PDF is password-protected"
    case "InvalidPDFException":
      return "the PDF is corrupt"
    default:
      return "the PDF could not be parsed"
  }
}

// Errors pdf.js raises outside the awaited promises would otherwise end the worker with an `error`
// event, which the adapter reads as a broken deployment rather than a bad file.
process.on("uncaughtException", (error) => reply({ _tag: "Unreadable", reason: reasonOf(error) }))
process.on("unhandledRejection", (error) => reply({ _tag: "Unreadable", reason: reasonOf(error) }))

/** The chunks of `streamTextContent`, which pdf.js types as `any`. */
interface TextChunk {
  readonly items: ReadonlyArray<{ readonly str?: string; readonly hasEOL?: boolean }>
}

type Page = Awaited<ReturnType<Awaited<ReturnType<typeof getDocumentProxy>>["getPage"]>>

/** A page's text, streamed so that reading stops (and pdf.js stops parsing) once `budget` is spent. */
const readPage = async (page: Page, budget: number) => {
  const reader = page.streamTextContent().getReader()
  const parts: Array<string> = []
  let length = 0
  while (length <= budget) {
    const chunk = await reader.read()
    if (chunk.done) return parts.join("").trim()
    for (const item of (chunk.value as TextChunk).items) {
      if (item.str === undefined) continue
      const text = item.hasEOL === true ? `${item.str}\n` : item.str
      parts.push(text)
      length += text.length
    }
  }
  // pdf.js asserts that a cancellation has a reason.
  await reader.cancel(new Error("enough text"))
  return parts.join("").trim()
}

const extract = async ({ bytes, maxTextChars }: PdfJob) => {
  const pdf = await getDocumentProxy(bytes, { verbosity: 0, stopAtErrors: false })
  try {
    let text = ""
    // One page at a time, released after use, so a many-page file never has every page in memory.
    for (let number = 1; number <= pdf.numPages && text.length <= maxTextChars; number++) {
      const page = await pdf.getPage(number)
      const pageText = await readPage(page, maxTextChars - text.length)
      page.cleanup()
      if (pageText !== "") text = text === "" ? pageText : `${text}\n\n${pageText}`
    }
    return text.slice(0, maxTextChars + 1)
  } finally {
    await pdf.loadingTask.destroy()
  }
}

try {
  const text = await extract(workerData as PdfJob)
  reply(
    text === ""
      ? { _tag: "Unreadable", reason: "the PDF has no text (scanned pages need OCR first)" }
      : { _tag: "Text", text }
  )
} catch (error) {
  reply({ _tag: "Unreadable", reason: reasonOf(error) })
}
