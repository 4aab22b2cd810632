import { DateTime, Schema } from "effect"
import type { RequestMessage } from "../shared/index.ts"
import { type ApiToken, budgetWindowEnd, budgetWindowStart } from "./ApiToken.ts"

/** The window a token's spend accrues in: UTC day, week from Monday, month; without an interval, forever. */
export const windowOf = (token: Pick<ApiToken, "budget_reset_interval">, now: DateTime.Utc) =>
  token.budget_reset_interval === null
    ? { start: DateTime.makeUnsafe(0), end: null }
    : { start: budgetWindowStart(token.budget_reset_interval, now), end: budgetWindowEnd(token.budget_reset_interval, now) }

/** Seconds until the budget resets (Retry-After); without a reset, a day. */
export const retryAfterSeconds = (end: DateTime.Utc | null, now: DateTime.Utc): number =>
  end === null ? 86_400 : Math.max(1, Math.ceil((DateTime.toEpochMillis(end) - DateTime.toEpochMillis(now)) / 1000))

/** Tokens allowed per message on top of its text: role, separators and the chat template's markers. */
export const messageAllowanceTokens = 16

/** UTF-8 length of `text`, counted without encoding it. */
export const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1) // NaN past the end, so a high surrogate there counts alone
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

export interface Prices {
  /** USD per million tokens; null when unknown. */
  readonly input: number | null
  readonly output: number | null
}

/**
 * What a token's trust in a price is kept for (BudgetLedger): what a call goes through, e.g. a
 * candidate or a model version, at its prices, so a changed price is trusted afresh.
 */
export const priceSubject = (target: string, prices: Prices): string => `${target} at ${prices.input}/${prices.output} per M`

/** What a budgeted call may cost, decided before it is made. */
export type CallBound =
  /** At most `amount` USD: the input and output prices are known. */
  | { readonly _tag: "Bounded"; readonly amount: number; readonly maxTokens: number }
  /** The price is unknown: the cost is only known once the upstream reports it. */
  | { readonly _tag: "Unbounded"; readonly maxTokens: number }

/**
 * Tokens an image part (`image_url`) is bounded by, whatever its size or detail: above what the
 * common vision models charge for one image (OpenAI's high detail tops out at 1,445 for a 768×2048
 * tiling; Anthropic's at about 1,600 for 1.15 megapixels).
 */
export const imageAllowanceTokens = 2_000

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

/** A value's bytes as sent: a string's UTF-8 length, else its JSON's. */
const jsonBytes = (value: unknown): number =>
  value === undefined || value === null ? 0 : utf8Bytes(typeof value === "string" ? value : JSON.stringify(value))

/** Input tokens a content may take: its text, each text part's, `imageAllowanceTokens` per image, any other part's JSON. */
const contentBytes = (content: unknown): number => {
  if (!Array.isArray(content)) return jsonBytes(content)
  let bytes = 0
  for (const part of content) {
    bytes += !isRecord(part)
      ? jsonBytes(part)
      : part.type === "text" && typeof part.text === "string"
      ? utf8Bytes(part.text)
      : part.type === "image_url"
      ? imageAllowanceTokens
      : jsonBytes(part)
  }
  return bytes
}

/** Input tokens a message may take: its role and content, any other property's JSON (tool calls), and the allowance. */
const messageBytes = (message: RequestMessage): number => {
  let bytes = utf8Bytes(message.role) + messageAllowanceTokens
  for (const [key, value] of Object.entries(message)) {
    if (key !== "role") bytes += key === "content" ? contentBytes(value) : jsonBytes(value)
  }
  return bytes
}

/** The request parameters a model reads as input besides the messages. */
const modelInputs = ["tools", "functions", "tool_choice", "function_call", "response_format"] as const

/**
 * The reservation of a budgeted call: an upper bound of its cost whenever the prices are known.
 * Input tokens are bounded by the UTF-8 bytes of the messages (a token is at least one byte in the
 * byte-level tokenisers models use: text, text parts, tool calls and any other property as JSON)
 * plus `messageAllowanceTokens` per message and `imageAllowanceTokens` per image part, and by the
 * JSON of the `parameters` the model reads as input (`modelInputs`: tool definitions, a response
 * format's schema); output tokens by
 * `max_tokens`, or `defaultMaxTokens` when the caller sets none, which is then sent upstream so
 * the bound holds, times the `n` choices asked for.
 */
export const boundCall = (
  prices: Prices,
  messages: ReadonlyArray<RequestMessage>,
  maxTokens: number | undefined,
  defaultMaxTokens: number,
  parameters?: Readonly<Record<string, unknown>>
): CallBound => {
  const output = maxTokens ?? defaultMaxTokens
  if (prices.input === null || prices.output === null) return { _tag: "Unbounded", maxTokens: output }
  let input = 0
  if (parameters !== undefined) for (const key of modelInputs) input += jsonBytes(parameters[key])
  for (const message of messages) input += messageBytes(message)
  const choices = typeof parameters?.n === "number" && parameters.n > 1 ? parameters.n : 1
  return { _tag: "Bounded", amount: (input * prices.input + output * choices * prices.output) / 1_000_000, maxTokens: output }
}

/**
 * What a completed budgeted call is charged: the cost the upstream reported or its usage priced;
 * else, for a priced call, its bound (the most it may have cost, so an upstream that reports no
 * usage cannot make its calls free); null (unknown, nothing charged) only for an unpriced call
 * that reports nothing.
 */
export const chargeOf = (bound: CallBound, cost: number | null): number | null =>
  cost ?? (bound._tag === "Bounded" ? bound.amount : null)

export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  token_id: Schema.String,
  budget_limit: Schema.Number,
  spent_usd: Schema.Number,
  retry_after_seconds: Schema.Number
}) {}
