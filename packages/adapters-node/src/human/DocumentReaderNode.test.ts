import { assert, describe, it, layer } from "@effect/vitest"
import { DocumentReader } from "@podium/domain/human"
import { Effect } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { deflateSync } from "node:zlib"
import { DocumentReaderNode, type DocumentReaderNodeOptions } from "./DocumentReaderNode.ts"

const utf8 = (text: string) => new TextEncoder().encode(text)
const latin1 = (text: string) => new Uint8Array(Buffer.from(text, "latin1"))

/** Built by hand: page one's content stream is plain, page two's is deflated; Helvetica, WinAnsi. */
const twoPages = new Uint8Array(readFileSync(new URL("../../test/fixtures/two-pages.pdf", import.meta.url)))
const twoPagesText = "Podium reads page one first.\nA second line on page one.\n\nThen page two follows: café."

/**
 * A one-page PDF whose page draws `content` (deflated, so a few KB can stand for megabytes of work).
 * `locked` adds a standard security handler whose empty user password does not open it.
 */
const pdfOf = (content: string, locked = false) => {
  const stream = deflateSync(Buffer.from(content, "latin1"))
  const objects = [
    Buffer.from("<< /Type /Catalog /Pages 2 0 R >>"),
    Buffer.from("<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>"),
    Buffer.from("<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"),
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from("\nendstream")]),
    Buffer.from("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
    ...(locked ? [Buffer.from(`<< /Filter /Standard /V 1 /R 2 /P -4 /O <${"ab".repeat(32)}> /U <${"cd".repeat(32)}> >>`)] : [])
  ]
  const parts = [Buffer.from("%PDF-1.4\n")]
  const offsets: Array<number> = []
  let offset = parts[0]!.length
  objects.forEach((body, i) => {
    const part = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from("\nendobj\n")])
    offsets.push(offset)
    parts.push(part)
    offset += part.length
  })
  const xref = offsets.map((at) => `${String(at).padStart(10, "0")} 00000 n \n`).join("")
  parts.push(Buffer.from(
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${locked ? `/Encrypt 6 0 R /ID [<${"0".repeat(32)}> <${"0".repeat(32)}>]` : ""}>>\nstartxref\n${offset}\n%%EOF\n`
  ))
  return new Uint8Array(Buffer.concat(parts))
}

const readWithDigest = (name: string, bytes: Uint8Array) => DocumentReader.use((reader) => reader.read(name, bytes))
/** What was read, but the digest (checked on its own below). */
const read = (name: string, bytes: Uint8Array) =>
  Effect.map(readWithDigest(name, bytes), ({ sha256: _, ...document }) => document)

const reasonFor = (name: string, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(read(name, bytes))
    assert.strictEqual(error._tag, "UnsupportedDocument")
    assert.strictEqual(error.name, name)
    return error.reason
  })

const withOptions = (options: DocumentReaderNodeOptions) => Effect.provide(DocumentReaderNode.layer(options))

layer(DocumentReaderNode.layer())("DocumentReaderNode", (it) => {
  describe("text", () => {
    it.effect("reads UTF-8 text; the extension chooses among the text types", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* read("notes.txt", utf8("Grüße, 世界\r\nline two")), {
          media_type: "text/plain",
          text: "Grüße, 世界\r\nline two"
        })
        assert.deepStrictEqual(yield* read("README", utf8("# not markdown without .md")), {
          media_type: "text/plain",
          text: "# not markdown without .md"
        })
        assert.deepStrictEqual(yield* read("guide.md", utf8("# Guide\n\n- one")), {
          media_type: "text/markdown",
          text: "# Guide\n\n- one"
        })
        assert.strictEqual((yield* read("guide.Markdown", utf8("x"))).media_type, "text/markdown")
        assert.deepStrictEqual(yield* read("DATA.CSV", utf8("a,b\n1,\"x, y\"\n")), {
          media_type: "text/csv",
          text: "a,b\n1,\"x, y\"\n"
        })
        assert.strictEqual((yield* read("dir.md/notes", utf8("x"))).media_type, "text/plain")
        assert.deepStrictEqual(yield* read("empty.txt", new Uint8Array()), { media_type: "text/plain", text: "" })
      }))

    it.effect("drops a leading byte order mark, and only that one", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* read("bom.csv", utf8("\uFEFFa,b"))).text, "a,b")
        assert.strictEqual((yield* read("mid.txt", utf8("a\uFEFFb"))).text, "a\uFEFFb")
      }))

    it.effect("reads JSON as uploaded, and refuses a .json file that is not JSON", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* read("data.json", utf8("\uFEFF {\"a\": [1, 2.5e-3, \"\\u00e9\"]}\n")), {
          media_type: "application/json",
          text: " {\"a\": [1, 2.5e-3, \"\\u00e9\"]}\n"
        })
        assert.strictEqual((yield* read("deep.json", utf8("[".repeat(100_000) + "]".repeat(100_000)))).media_type, "application/json")
        for (const valid of ["0", "-0.0e+0", "\"\\u00E9\\n\\/\"", " [ ] ", "{\"\":{}}", "[true,false,null]"]) {
          assert.strictEqual((yield* read("ok.json", utf8(valid))).text, valid)
        }
        for (
          const invalid of [
            "",
            "[1,]",
            "{\"a\": 1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "\"\\x\"",
            "\"\\u12G4\"",
            "\"a\nb\"",
            "[1 2]",
            "{\"a\" 1}",
            "{a: 1}",
            "'a'",
            "tru",
            "[",
            "{}}",
            "1 2",
            "NaN"
          ]
        ) {
          assert.strictEqual(yield* reasonFor("data.json", utf8(invalid)), "not valid JSON", invalid)
        }
        assert.strictEqual((yield* read("data.txt", utf8("{\"a\": 1,}"))).media_type, "text/plain")
      }))

    it.effect("property: a .json file is accepted exactly when JSON.parse accepts its text", () =>
      Effect.gen(function*() {
        const reader = yield* DocumentReader
        const accepts = (text: string) => Effect.runSyncExit(reader.read("p.json", utf8(text)))._tag === "Success"
        const parses = (text: string) => {
          try {
            JSON.parse(text)
            return true
          } catch {
            return false
          }
        }
        // Valid JSON with one small edit, mostly around the punctuation where a scanner goes wrong.
        const punctuation = fc.constantFrom(..."{}[],:\" \n0-.eE+1tfn\\u/".split(""))
        const edited = fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.nat({ max: 2 }), fc.string({ unit: punctuation, maxLength: 2 }))
          .map(([json, at, cut, insert]) => {
            const i = at % (json.length + 1)
            return json.slice(0, i) + insert + json.slice(i + cut)
          })
        const tokens = fc.array(
          fc.constantFrom("{", "}", "[", "]", ",", ":", " ", "\"k\"", "\"\\u00e9\"", "0", "-1.5e+3", "01", "1.", "true", "nul", "null"),
          { maxLength: 8 }
        ).map((parts) => parts.join(""))
        fc.assert(fc.property(fc.oneof(fc.json(), edited, tokens), (text) => accepts(text) === parses(text)), {
          numRuns: 20_000
        })
      }))
  })

  describe("binary", () => {
    it.effect("refuses anything that is neither a PDF nor UTF-8 text, whatever its name", () =>
      Effect.gen(function*() {
        const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52])
        const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0x08, 0])
        for (
          const [name, bytes] of [
            ["image.png", png],
            ["image.txt", png],
            ["report.docx", zip],
            ["nul.txt", utf8("text with a \u0000 inside")],
            ["nul.json", utf8("\"\u0000\"")],
            ["latin1.txt", latin1("caf\u00e9")],
            ["truncated.md", utf8("é").subarray(0, 1)],
            ["utf16.txt", new Uint8Array([0xff, 0xfe, 0x61, 0x00])]
          ] as const
        ) {
          assert.strictEqual(yield* reasonFor(name, bytes), "not a PDF or UTF-8 text file", name)
        }
      }))
  })

  it.effect("gives the SHA-256 of the bytes", () =>
    Effect.gen(function*() {
      const document = yield* readWithDigest("abc.txt", new TextEncoder().encode("abc"))
      assert.strictEqual(document.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }))

  describe("PDF", () => {
    it.effect("reads the text of every page in order, whatever the file is called", () =>
      Effect.gen(function*() {
        assert.isBelow(twoPages.length, 2048)
        assert.deepStrictEqual(yield* read("paper.pdf", twoPages), { media_type: "application/pdf", text: twoPagesText })
        assert.deepStrictEqual(yield* read("paper.txt", twoPages), { media_type: "application/pdf", text: twoPagesText })
      }))

    it.effect("leaves the caller's bytes as they were (pdf.js takes ownership of what it is given)", () =>
      Effect.gen(function*() {
        const buffer = new Uint8Array(twoPages.length + 8)
        buffer.set(twoPages, 4)
        const view = buffer.subarray(4, 4 + twoPages.length)
        assert.strictEqual((yield* read("view.pdf", view)).text, twoPagesText)
        assert.strictEqual(view.byteLength, twoPages.length)
        assert.deepStrictEqual(view, twoPages)
      }))

    it.effect("a corrupt or truncated PDF is unsupported, not a defect", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* reasonFor("bad.pdf", latin1("%PDF-1.7\n\u00ff\u0000garbage 1 0 obj << /Type")), "the PDF is corrupt")
        assert.strictEqual(yield* reasonFor("magic.pdf", utf8("%PDF-")), "the PDF is corrupt")
        assert.strictEqual(yield* reasonFor("half.pdf", twoPages.subarray(0, 300)), "the PDF is corrupt")
      }))

    it.effect("a password-protected PDF is unsupported", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* reasonFor("locked.pdf", pdfOf("BT /F1 12 Tf 72 700 Td (secret) Tj ET\n", true)), "the PDF is password-protected")
      }))

    it.effect("a PDF without text is unsupported", () =>
      Effect.gen(function*() {
        assert.strictEqual(
          yield* reasonFor("scan.pdf", pdfOf("q 100 0 0 100 72 600 cm 0 0 1 1 re f Q\n")),
          "the PDF has no text (scanned pages need OCR first)"
        )
      }))
  })
})

describe("DocumentReaderNode limits", () => {
  it.live("stops a PDF that takes too long, and does not wait for it", () =>
    Effect.gen(function*() {
      // About 20 KB that pdf.js needs several seconds for.
      const slow = pdfOf(`BT /F1 12 Tf 72 700 Td (late) Tj ET ${"q Q ".repeat(5_000_000)}\n`)
      assert.isBelow(slow.length, 32 * 1024)
      const started = Date.now()
      assert.strictEqual(yield* reasonFor("slow.pdf", slow), "could not read the PDF in time")
      assert.isBelow(Date.now() - started, 2_500)
      // The worker is gone: a worker still parsing would burn about a core meanwhile.
      const cpu = process.cpuUsage()
      yield* Effect.sleep("1 second")
      const { user, system } = process.cpuUsage(cpu)
      assert.isBelow((user + system) / 1000, 400)
    }).pipe(withOptions({ pdfTimeout: "1 second" })))

  it.live("the time limit covers the worker's start-up", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* reasonFor("paper.pdf", twoPages), "could not read the PDF in time")
    }).pipe(withOptions({ pdfTimeout: "1 millis" })))

  it.live("reads a PDF's text only up to the given length plus one", () =>
    Effect.gen(function*() {
      const long = pdfOf(`BT /F1 12 Tf ${"1 0 0 1 72 700 Tm (abcdefgh) Tj ".repeat(1_000_000)}ET\n`)
      const started = Date.now()
      const { text } = yield* read("long.pdf", long)
      assert.strictEqual(text, "abcdefgh".repeat(126).slice(0, 1_001))
      assert.isBelow(Date.now() - started, 5_000)
    }).pipe(withOptions({ pdfMaxTextChars: 1_000 })))

  it.live("stops a PDF that inflates past the memory limit (outside the V8 heap, too)", () =>
    Effect.gen(function*() {
      // About 200 KB of deflated spaces that pdf.js inflates to 200 MiB of ArrayBuffers.
      const bomb = pdfOf(" ".repeat(200 * 1024 * 1024))
      assert.isBelow(bomb.length, 256 * 1024)
      assert.strictEqual(yield* reasonFor("bomb.pdf", bomb), "the PDF needs too much memory to read")
    }).pipe(withOptions({ pdfMemoryMb: 64, pdfTimeout: "20 seconds" })))

  it.live("refuses a memory limit too small for a worker to start", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(read("paper.pdf", twoPages).pipe(withOptions({ pdfMemoryMb: 1 })))
      assert.isTrue(exit._tag === "Failure" && exit.cause.reasons.some((reason) => reason._tag === "Die"))
    }))
})
