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

const trailingNoise = /[\s.,!?;:…]+$/u

/**
 * The form two answers are compared in, so that "Paris." matches " paris": Unicode NFKC (full-width
 * and compatibility characters become their plain forms), lower case, every run of whitespace one
 * space, no leading or trailing whitespace, and no trailing `. , ! ? ; : …` (models add a full stop
 * or an ellipsis that the reference lacks). Punctuation inside the text is kept: it may be the answer.
 */
export const normaliseAnswer = (text: string): string =>
  text.normalize("NFKC").toLowerCase().normalize("NFKC")
    .replace(/\s+/gu, " ")
    .replace(trailingNoise, "")
    .trim()

/** JSON text starts like this; anything else is plain text, and not handed to a parser that would throw. */
const jsonStart = /^[[{"\-0-9]|^(true|false|null)$/

const notJson: Result.Result<unknown, string> = Result.fail("not JSON")

const parseJson = (text: string): Result.Result<unknown, string> =>
  jsonStart.test(text)
    ? Result.try({
      try: (): unknown => JSON.parse(text),
      // Stryker disable next-line ArrowFunction: equivalent, no caller reads why the text is not JSON
      catch: (e) => (e as Error).message
    })
    : notJson

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** JSON values equal regardless of object key order; numbers by value, so `4` equals `4.0`. */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]))
  if (isRecord(a)) {
    if (!isRecord(b)) return false
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
  }
  return a === b
}

/**
 * Whether an answer matches the reference. When both are JSON (objects, arrays, numbers, `true`,
 * `null`) they are compared as values, so key order and number spelling do not matter; otherwise as
 * normalised text. A JSON string literal counts as its text, so `"Paris"` matches `Paris`.
 */
export const exactMatch = (answer: string, reference: string): boolean => {
  const a = parseJson(answer.trim())
  const b = parseJson(reference.trim())
  if (Result.isSuccess(a) && Result.isSuccess(b) && typeof a.success !== "string" && typeof b.success !== "string") {
    return sameJson(a.success, b.success)
  }
  const textOf = (raw: string, parsed: Result.Result<unknown, string>) =>
    Result.isSuccess(parsed) && typeof parsed.success === "string" ? parsed.success : raw
  return normaliseAnswer(textOf(answer, a)) === normaliseAnswer(textOf(reference, b))
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
 * object and nothing else.
 */
export const judgeRequest = (input: { readonly question: string; readonly reference: string | null; readonly answer: string }): {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly response_format: unknown
} => ({
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

const fenced = /^```[a-z]*[^\S\n]*\n?([\s\S]*?)\n?\s*```$/i

/**
 * The verdict in a judge's reply: the JSON object alone or inside a markdown code fence (models
 * that ignore the response format often fence it). Anything else fails with a short reason, so the
 * run can record why the answer could not be scored rather than guess.
 */
export const parseJudgeReply = (text: string): Result.Result<JudgeReply, string> => {
  const trimmed = text.trim()
  const body = fenced.exec(trimmed)?.[1] ?? trimmed
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
