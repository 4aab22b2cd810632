import type { ChatUsage } from "@podium/domain/inference"

export const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
export const isCount = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)

/** The message of an OpenAI-shaped `{"error": {"message"}}` (or a bare `{"error": "..."}`). */
export const upstreamMessage = (body: unknown): string | undefined => {
  if (!isRecord(body)) return undefined
  const error = body.error
  if (typeof error === "string") return error
  if (isRecord(error) && typeof error.message === "string") return error.message
  return undefined
}

/** `usage` of a completion or of a stream's usage chunk; a missing total is the sum. */
export const usageOf = (body: Record<string, unknown>): ChatUsage | null => {
  const usage = body.usage
  if (!isRecord(usage) || !isCount(usage.prompt_tokens) || !isCount(usage.completion_tokens)) return null
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: isCount(usage.total_tokens) ? usage.total_tokens : usage.prompt_tokens + usage.completion_tokens
  }
}

/** OpenRouter reports what it charged, in credits (USD), as `usage.cost`. */
export const reportedCost = (body: Record<string, unknown>): number | null =>
  isRecord(body.usage) && isCount(body.usage.cost) ? body.usage.cost : null

export interface ChatStreamEventsOptions {
  /** False drops the usage-only chunk and strips `usage` from the others. */
  readonly includeUsage: boolean
  /** Replaces each event's `model`. */
  readonly answerAs?: string | undefined
  /** Removes the token from an upstream error message, before it is passed on or kept. */
  readonly scrub: (text: string) => string
}

interface ToolCall {
  id: string | undefined
  type: string | undefined
  name: string | undefined
  arguments: string
  argumentsLength: number
}

const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22
const BACKSLASH = 0x5c

const isDigitAt = (text: string, at: number) => {
  const c = text.charCodeAt(at)
  return c >= 0x30 && c <= 0x39
}
const encoder = new TextEncoder()

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  const joined = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    joined.set(part, at)
    at += part.length
  }
  return joined
}

/**
 * OpenAI's chat-completion event stream, read chunk by chunk as it arrives: `push` gives back the
 * whole events a chunk completes (a partial event waits for its blank line, so a chunk boundary may
 * fall anywhere, in a line or in a UTF-8 character), the received bytes themselves unless an event
 * must change, and keeps what the events said (text, tool calls, usage, an error). Events end at a
 * blank line (`\n\n` or `\r\n\r\n`); a lone `\r` as line end is not recognised. Nothing after
 * `data: [DONE]` is passed on.
 */
/**
 * The most text (UTF-16 code units) of a streamed answer kept for its trace, and of each tool call's
 * arguments: above any model's output limit today (128k tokens is about 512 KB), so an answer is
 * kept whole, while an endless stream cannot make a reader hold it all. What is cut is said.
 */
export const keptTextLength = 1024 * 1024

/** `text` whole, else its first `keptTextLength` units and how long it was. */
const kept = (text: string, length: number) =>
  length <= keptTextLength ? text : `${text}… [cut: ${length} characters in all]`

export class ChatStreamEvents {
  readonly #options: ChatStreamEventsOptions
  readonly #decoder = new TextDecoder()
  /** The bytes of the event under way, in the chunks they came in. */
  #pending: Array<Uint8Array> = []
  #pendingLength = 0
  /** Where the current line starts, counted from the start of the pending bytes (may be one past a LF). */
  #lineStart = 0
  /** Whether the byte before the current chunk was a CR (a line of just `\r` is blank). */
  #lastWasCr = false
  #done = false
  #text = ""
  #textLength = 0
  #toolCalls: Array<ToolCall> = []
  #usage: ChatUsage | null = null
  #reportedCost: number | null = null
  #error: string | null = null

  constructor(options: ChatStreamEventsOptions) {
    this.#options = options
  }

  /** Whether `data: [DONE]` has been passed on. */
  get done(): boolean {
    return this.#done
  }
  /** The text of choice 0's deltas, else its tool calls as JSON, else null. */
  get output(): string | null {
    if (this.#textLength > 0) return kept(this.#text, this.#textLength)
    const calls = this.#toolCalls.filter((call) => call !== undefined)
    if (calls.length === 0) return null
    return JSON.stringify(calls.map((call) => ({
      ...(call.id === undefined ? {} : { id: call.id }),
      type: call.type ?? "function",
      function: { name: call.name ?? "", arguments: kept(call.arguments, call.argumentsLength) }
    })))
  }
  get usage(): ChatUsage | null {
    return this.#usage
  }
  get reportedCost(): number | null {
    return this.#reportedCost
  }
  /** The upstream's error event's message, scrubbed. */
  get error(): string | null {
    return this.#error
  }

  /** The whole events `chunk` completes, as bytes to pass on; undefined when there are none (yet). */
  push(chunk: Uint8Array): Uint8Array | undefined {
    if (this.#done || chunk.length === 0) return undefined
    // event ends, as offsets into pending + chunk
    const ends: Array<number> = []
    const base = this.#pendingLength
    let lineStart = this.#lineStart
    for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
      const at = base + i
      const blank = at === lineStart ||
        (at === lineStart + 1 && (i === 0 ? this.#lastWasCr : chunk[i - 1] === CR))
      lineStart = at + 1
      if (blank) ends.push(at + 1)
    }
    this.#lastWasCr = chunk[chunk.length - 1] === CR
    const last = ends.at(-1)
    if (last === undefined) {
      this.#pending.push(chunk)
      this.#pendingLength += chunk.length
      this.#lineStart = lineStart
      return undefined
    }
    const cut = last - base
    const region = this.#pendingLength === 0
      ? chunk.subarray(0, cut)
      : concat([...this.#pending, chunk.subarray(0, cut)], last)
    const rest = chunk.subarray(cut)
    this.#pending = rest.length === 0 ? [] : [rest]
    this.#pendingLength = rest.length
    this.#lineStart = lineStart - last
    return this.#events(region, ends)
  }

  /** Reads the whole events in `region` (ending at `ends`), and gives back what to pass on. */
  #events(region: Uint8Array, ends: ReadonlyArray<number>): Uint8Array | undefined {
    // LF and CR never occur inside a UTF-8 sequence: the text splits into the same events
    const text = this.#decoder.decode(region)
    const out: Array<Uint8Array> = []
    let outLength = 0
    const emit = (bytes: Uint8Array) => {
      if (bytes.length === 0) return
      out.push(bytes)
      outLength += bytes.length
    }
    let runStart = 0 // first byte not yet passed on
    let event = 0
    let eventStart = 0 // in the text
    let lineStart = 0
    let passed = region.length
    for (let i = text.indexOf("\n"); i !== -1 && event < ends.length; i = text.indexOf("\n", i + 1)) {
      const blank = i === lineStart || (i === lineStart + 1 && text.charCodeAt(i - 1) === CR)
      lineStart = i + 1
      if (!blank) continue
      const byteStart = event === 0 ? 0 : ends[event - 1]!
      const byteEnd = ends[event]!
      const replacement = this.#event(text.slice(eventStart, i + 1))
      if (replacement !== undefined) {
        emit(region.subarray(runStart, byteStart))
        if (replacement !== null) emit(encoder.encode(replacement))
        runStart = byteEnd
      }
      eventStart = i + 1
      event++
      if (this.#done) {
        passed = byteEnd
        break
      }
    }
    if (runStart === 0 && passed === region.length) return region
    emit(region.subarray(runStart, passed))
    if (this.#done) {
      this.#pending = []
      this.#pendingLength = 0
    }
    return out.length === 0 ? undefined : out.length === 1 ? out[0] : concat(out, outLength)
  }

  /** Reads one event; gives undefined to pass it on as it came, null to drop it, or its new text. */
  #event(event: string): string | null | undefined {
    // the usual event, one `data: ` line: its text read, without parsing, when nothing in it is to change
    if (event.startsWith("data: {") && event.indexOf("\n") === event.length - 2 && this.#skimmed(event.slice(6, -2))) {
      return undefined
    }
    let data: string | undefined
    let others = ""
    let start = 0
    for (let end = event.indexOf("\n"); end !== -1; end = event.indexOf("\n", start)) {
      const line = event.charCodeAt(end - 1) === CR ? event.slice(start, end - 1) : event.slice(start, end)
      start = end + 1
      if (line.startsWith("data:")) {
        const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5)
        data = data === undefined ? value : `${data}\n${value}`
      } else if (line !== "") {
        others += `${line}\n`
      }
    }
    if (data === undefined) return undefined
    if (data === "[DONE]") {
      this.#done = true
      return undefined
    }
    let json: unknown
    try {
      json = JSON.parse(data)
    } catch {
      return undefined
    }
    if (!isRecord(json)) return undefined
    const changed = this.#read(json)
    if (changed === null) return null
    return changed ? `${others}data: ${JSON.stringify(json)}\n\n` : undefined
  }

  /**
   * Reads a chunk that is a plain text delta of choice 0 without parsing it, when that is sure: no
   * usage (but `"usage":null` while usage is asked for), error, tool calls, other choice or renaming,
   * and no escape outside the text (so each `"key"` found is a key). False leaves it to be parsed.
   */
  #skimmed(data: string): boolean {
    const options = this.#options
    if (options.answerAs !== undefined || data.includes('"error"') || data.includes('"tool_calls"')) return false
    for (let at = data.indexOf('"usage"'); at !== -1; at = data.indexOf('"usage"', at + 7)) {
      if (!options.includeUsage || !data.startsWith('"usage":null', at)) return false
    }
    const index = data.indexOf('"index":')
    if (index !== -1 && (!data.startsWith('"index":0', index) || isDigitAt(data, index + 9) || data.includes('"index":', index + 8))) {
      return false
    }
    const key = data.indexOf('"content"')
    const escape = data.indexOf("\\")
    if (key === -1) return escape === -1
    const choices = data.indexOf('"choices":[')
    const delta = data.indexOf('"delta":{', choices)
    if (choices === -1 || delta === -1 || delta > key || !data.startsWith('"content":"', key) || data.includes('"content"', key + 9)) {
      return false
    }
    const start = key + 11
    let end = start
    for (let c = data.charCodeAt(end); c !== QUOTE; c = data.charCodeAt(end)) {
      if (Number.isNaN(c)) return false
      end += c === BACKSLASH ? 2 : 1
    }
    if (escape !== -1 && (escape < start || data.lastIndexOf("\\") > end)) return false
    let text = data.slice(start, end)
    if (escape !== -1) {
      try {
        text = JSON.parse(`"${text}"`) as string
      } catch {
        return false
      }
    }
    this.#addText(text)
    return true
  }

  /** Keeps what a chunk says and changes it as asked: true when changed, null to drop it. */
  #read(chunk: Record<string, unknown>): boolean | null {
    let changed = false
    const choices = chunk.choices
    if (Array.isArray(choices)) {
      for (const choice of choices) {
        if (isRecord(choice) && (choice.index === undefined || choice.index === 0) && isRecord(choice.delta)) {
          this.#delta(choice.delta)
          break
        }
      }
    }
    if (chunk.usage !== undefined) {
      const usage = usageOf(chunk)
      if (usage !== null) {
        this.#usage = usage
        this.#reportedCost = reportedCost(chunk)
      }
      if (!this.#options.includeUsage) {
        if (chunk.usage !== null && (!Array.isArray(choices) || choices.length === 0)) return null
        delete chunk.usage
        changed = true
      }
    }
    if (chunk.error !== undefined && chunk.error !== null) {
      const message = upstreamMessage(chunk) ?? JSON.stringify(chunk.error)
      const scrubbed = this.#options.scrub(message)
      this.#error = scrubbed.slice(0, 300)
      if (scrubbed !== message) {
        chunk.error = isRecord(chunk.error) ? { ...chunk.error, message: scrubbed } : scrubbed
        changed = true
      }
    }
    const answerAs = this.#options.answerAs
    if (answerAs !== undefined && chunk.model !== undefined && chunk.model !== answerAs) {
      chunk.model = answerAs
      changed = true
    }
    return changed
  }

  #addText(text: string) {
    if (this.#textLength < keptTextLength) this.#text += text.slice(0, keptTextLength - this.#textLength)
    this.#textLength += text.length
  }

  #delta(delta: Record<string, unknown>) {
    if (typeof delta.content === "string") this.#addText(delta.content)
    if (!Array.isArray(delta.tool_calls)) return
    for (const call of delta.tool_calls) {
      if (!isRecord(call)) continue
      const index = isCount(call.index) ? call.index : 0
      const known = this.#toolCalls[index] ??= { id: undefined, type: undefined, name: undefined, arguments: "", argumentsLength: 0 }
      if (typeof call.id === "string" && known.id === undefined) known.id = call.id
      if (typeof call.type === "string" && known.type === undefined) known.type = call.type
      if (isRecord(call.function)) {
        if (typeof call.function.name === "string" && known.name === undefined) known.name = call.function.name
        const part = call.function.arguments
        if (typeof part === "string") {
          if (known.argumentsLength < keptTextLength) known.arguments += part.slice(0, keptTextLength - known.argumentsLength)
          known.argumentsLength += part.length
        }
      }
    }
  }
}
