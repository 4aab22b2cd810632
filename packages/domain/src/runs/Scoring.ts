import { Option, Result } from "effect"

/**
 * How an answer is scored against a dataset row: exact match for rows with a reference, or an LLM
 * judge asked for a structured verdict. Pure: the run sends the judge request and hands back its text.
 */

export type JudgeVerdict = "correct" | "incorrect"

export interface JudgeReply {
  readonly verdict: JudgeVerdict
  readonly reason: string
}

/** Unicode's White_Space property, exactly: JavaScript's `\s` also takes U+FEFF and leaves out U+0085. */
const spaces = /[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/gu
const isSpace = (unit: number): boolean =>
  (unit >= 0x09 && unit <= 0x0d) || unit === 0x20 || unit === 0x85 || unit === 0xa0 || unit === 0x1680 ||
  (unit >= 0x2000 && unit <= 0x200a) || unit === 0x2028 || unit === 0x2029 || unit === 0x202f || unit === 0x205f || unit === 0x3000

/** Trailing noise once white space is collapsed: a single space or `. , ! ? ; : …` (all single UTF-16 units). */
const isNoise = (unit: number): boolean => unit === 0x20 || ".,!?;:\u2026".includes(String.fromCharCode(unit))

/**
 * `text` without the units `drop` holds at its start (when `start`) and its end. A loop, not a
 * regular expression: `[\s]+$` backtracks quadratically over a long run inside the text.
 */
const trimBy = (text: string, drop: (unit: number) => boolean, start: boolean): string => {
  let from = 0
  let to = text.length
  while (start && from < to && drop(text.charCodeAt(from))) from++
  while (to > from && drop(text.charCodeAt(to - 1))) to--
  return text.slice(from, to)
}

/** `text` without White_Space at either end. */
const trimSpace = (text: string): string => trimBy(text, isSpace, true)

const smallCherokee = /[\u13f8-\u13fd\uab70-\uabbf]/gu

/**
 * Unicode full case folding (CaseFolding.txt, statuses C and F), as Python's `str.casefold`: upper
 * then lower case does it for all but a few code points, put right here. Dotless ı folds to itself
 * (not to i); capital ẞ to ss like ß; final ς to σ (lower casing would make a word-final σ ς);
 * Cherokee to its capitals (ꭰ to Ꭰ), the one script that folds upwards. İ folds to i and U+0307.
 * Checked once against Python 3.11 for every code point: equal but for letters added after
 * Unicode 14, which Python 3.11 does not know and Node folds.
 */
export const caseFold = (text: string): string =>
  text.split("ı").map((part) => part.toUpperCase().toLowerCase()).join("ı")
    .replace(/ς/gu, "σ")
    .replace(/ß/gu, "ss")
    .replace(smallCherokee, (c) => String.fromCharCode(c.charCodeAt(0) - (c.charCodeAt(0) >= 0xab70 ? 0x97d0 : 8)))

/**
 * The form two answers are compared in, so that "Paris." matches " paris": Unicode NFKC (full-width
 * and compatibility characters become their plain forms), full case folding (so STRASSE matches
 * Straße), every run of Unicode White_Space one space, none at either end, and no trailing
 * `. , ! ? ; : …` (models add a full stop or an ellipsis that the reference lacks). Punctuation
 * inside the text is kept: it may be the answer.
 */
export const normaliseAnswer = (text: string): string =>
  trimSpace(trimBy(caseFold(text.normalize("NFKC")).normalize("NFKC").replace(spaces, " "), isNoise, false))

/** JSON text starts like this; anything else is plain text, and not handed to a parser that would throw. */
const jsonStart = /^[[{"\-0-9]|^(true|false|null)$/

const notJson: Result.Result<unknown, string> = Result.fail("not JSON")

/** A number as the exact decimal its text spells, in {@link canonicalDecimal}'s form. */
class Decimal {
  readonly canonical: string
  constructor(canonical: string) {
    this.canonical = canonical
  }
}

const decimalSyntax = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i

/**
 * The one spelling of the decimal number `text` spells, or undefined when it spells none: a sign
 * (`-` only, and none for zero), the significant digits without leading or trailing zeros, and the
 * power of ten, so that `1.0`, `01`, `+1` and `0.1e1` are all `1e0`, `1e2` and `100.00` are `1e2`,
 * `-0` is `0`, and `12345678901234567890` differs from `12345678901234567891`. Exact at any size.
 */
const canonicalDecimal = (text: string): string | undefined => {
  const match = decimalSyntax.exec(text)
  if (match === null) return undefined
  const [, sign, whole = "", fraction = "", exponent = "0"] = match
  if (whole === "" && fraction === "") return undefined
  const digits = (whole + fraction).replace(/^0+/, "")
  // a loop: `/0+$/` backtracks quadratically over a long run of zeros before another digit
  let end = digits.length
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) end--
  const significant = digits.slice(0, end)
  if (significant === "") return "0"
  const power = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length)
  return `${sign === "-" ? "-" : ""}${significant}e${power}`
}

/** JSON.parse's reviver: a number becomes the exact decimal of its source text (handed over by Node 21 and later). */
const exactNumbers = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" ? new Decimal(canonicalDecimal(context?.source ?? String(value)) ?? String(value)) : value

const parseJson = (text: string): Result.Result<unknown, string> =>
  jsonStart.test(text)
    ? Result.try({
      try: (): unknown => JSON.parse(text, exactNumbers),
      // Stryker disable next-line ArrowFunction: equivalent, no caller reads why the text is not JSON
      catch: (e) => (e as Error).message
    })
    : notJson

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Decimal)

/** JSON values equal regardless of object key order; numbers as exact decimals, so `4` equals `4.0`. */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a instanceof Decimal) return b instanceof Decimal && a.canonical === b.canonical
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  if (isRecord(a)) {
    if (!isRecord(b)) return false
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
  }
  return a === b
}

/** Normalised texts equal, or both spelling the same decimal number (`007` and `7.0`). */
const sameText = (a: string, b: string): boolean => {
  if (a === b) return true
  const number = canonicalDecimal(a)
  return number !== undefined && number === canonicalDecimal(b)
}

/**
 * Whether an answer matches the reference. When both are JSON (objects, arrays, numbers, `true`,
 * `null`) they are compared as values, so key order and number spelling do not matter (numbers as
 * exact decimals, not as doubles); otherwise as normalised text ({@link normaliseAnswer}), where two
 * texts that are decimal numbers (sign, digits, a point, an exponent) compare as such, so `007`
 * matches `7.0` and `+1e2` matches `100`. A JSON string literal counts as its text, so `"Paris"`
 * matches `Paris`. White space at either end is Unicode White_Space, as in the normalised text.
 */
export const exactMatch = (answer: string, reference: string): boolean => {
  const a = parseJson(trimSpace(answer))
  const b = parseJson(trimSpace(reference))
  if (Result.isSuccess(a) && Result.isSuccess(b) && typeof a.success !== "string" && typeof b.success !== "string") {
    return sameJson(a.success, b.success)
  }
  const textOf = (raw: string, parsed: Result.Result<unknown, string>) =>
    Result.isSuccess(parsed) && typeof parsed.success === "string" ? parsed.success : raw
  return sameText(normaliseAnswer(textOf(answer, a)), normaliseAnswer(textOf(reference, b)))
}

const verdictSchema = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["correct", "incorrect"] },
    reason: { type: "string" }
  },
  required: ["verdict", "reason"],
  additionalProperties: false
}

const replyRule = `Reply only with a JSON object {"verdict": "correct" | "incorrect", "reason": string}, the reason in one short sentence.`

const withReference = "You grade answers to questions. Decide whether the answer is correct given the question and " +
  "the reference answer. The answer need not repeat the reference word for word: it is correct when it means the " +
  `same thing and adds nothing that contradicts it. ${replyRule}`

const withoutReference = "You grade answers to questions. There is no reference answer: decide whether the answer " +
  `is correct on its own merits, as a careful expert would. ${replyRule}`

/**
 * The chat request that asks a judge model for a verdict. Question, reference and answer sit in
 * separate tagged blocks so that text inside the answer cannot pass for the reference or for
 * instructions; the JSON schema response format makes providers that support it return the verdict
 * object and nothing else. Temperature 0, so that the same answer gets the same verdict as far as
 * the provider allows (a leaderboard has no judge temperature to set).
 */
export const judgeRequest = (input: { readonly question: string; readonly reference: string | null; readonly answer: string }): {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly temperature: number
  readonly response_format: unknown
} => ({
  temperature: 0,
  messages: [
    { role: "system", content: input.reference === null ? withoutReference : withReference },
    {
      role: "user",
      content: [
        `<question>\n${input.question}\n</question>`,
        ...(input.reference === null ? [] : [`<reference>\n${input.reference}\n</reference>`]),
        `<answer>\n${input.answer}\n</answer>`
      ].join("\n\n")
    }
  ],
  response_format: { type: "json_schema", json_schema: { name: "verdict", strict: true, schema: verdictSchema } }
})

const fenceOpening = /^```[a-z]*[^\S\n]*/i
const lineFenceOpening = /\n[^\S\n]*```[a-z]*[^\S\n]*\n/i

/**
 * The text inside the fenced block that ends `text`, opened either where `text` starts or, after
 * prose, by the first fence that opens a line. Plain index arithmetic around two linear patterns:
 * a lazy body followed by `\s*` backtracks quadratically over a long run of spaces.
 */
const fencedBody = (text: string): string | undefined => {
  if (!text.endsWith("```")) return undefined
  const closing = text.length - 3
  const opening = fenceOpening.exec(text)
  if (opening !== null) return opening[0].length <= closing ? text.slice(opening[0].length, closing) : undefined
  const line = lineFenceOpening.exec(text)
  return line !== null && line.index + line[0].length <= closing ? text.slice(line.index + line[0].length, closing) : undefined
}
const leadingThink = /^<think>[\s\S]*?<\/think>/i

/**
 * The verdict in a judge's reply: the JSON object alone or inside a markdown code fence (models
 * that ignore the response format often fence it). Reasoning models may first think aloud: a
 * leading `<think>…</think>` block is dropped, and when prose comes before a fenced block that ends
 * the reply, the JSON is taken from that block. Anything else (prose around bare JSON, a think block
 * left open) fails with a short reason, so the run can record why the answer could not be scored
 * rather than guess.
 */
export const parseJudgeReply = (text: string): Result.Result<JudgeReply, string> => {
  const trimmed = text.trim().replace(leadingThink, "").trim()
  // a bare object ends in `}`, never in a fence, so it cannot pass for prose before one
  const body = fencedBody(trimmed) ?? trimmed
  const parsed = parseJson(body.trim())
  if (Result.isFailure(parsed)) return Result.fail("The judge's reply is not JSON")
  const reply = parsed.success
  if (!isRecord(reply)) return Result.fail("The judge's reply is not a JSON object")
  const verdict = typeof reply.verdict === "string" ? reply.verdict.toLowerCase() : undefined
  if (verdict !== "correct" && verdict !== "incorrect") {
    return Result.fail(`The judge's verdict is not "correct" or "incorrect"`)
  }
  if (reply.reason !== undefined && typeof reply.reason !== "string") return Result.fail("The judge's reason is not a string")
  return Result.succeed({ verdict, reason: reply.reason ?? "" })
}

/** The leaderboard's judge model, when it names one: `judge_provider` router or hub, and `judge_model`. */
export const judgeModelOf = (challenge: { readonly judge_provider: string | null; readonly judge_model: string | null }) => {
  const { judge_model, judge_provider } = challenge
  return (judge_provider === "router" || judge_provider === "hub") && judge_model !== null && judge_model.trim() !== ""
    ? Option.some({ provider: judge_provider, model: judge_model } as const)
    : Option.none()
}
