import { Schema } from "effect"

const Text = Schema.String.check(Schema.isMaxLength(1_000_000))
const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

/** A part of a message's content (`{type: "text", text}`, `{type: "image_url", image_url: {url}}`, ...), kept as sent. */
const ContentPart = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), Rest)

/**
 * A turn as OpenAI's chat-completions request gives it: `content` a string, null (an assistant turn
 * with `tool_calls`) or an array of parts; every other property (`tool_calls`, `tool_call_id`,
 * `name`) kept as sent. The interface's `{role, content: string}` is one.
 */
export const InferenceMessage = Schema.StructWithRest(
  Schema.Struct({
    role: Schema.String,
    content: Schema.optionalKey(Schema.NullOr(Schema.Union([Text, Schema.Array(ContentPart)])))
  }),
  Rest
)
export type InferenceMessage = typeof InferenceMessage.Type

/**
 * An inference request, through a leaderboard or a model alike: the interface's (an open object)
 * and OpenAI's whole chat-completions request, a superset of it. Its input becomes the conversation
 * by `requestMessages` (Prompt.ts): `messages` when non-empty, else exactly one of input, prompt,
 * question and query. Every other property is forwarded to the upstream (`forwardedParameters`).
 */
export const InferenceRequest = Schema.StructWithRest(
  Schema.Struct({
    input: Schema.optionalKey(Text),
    prompt: Schema.optionalKey(Text),
    question: Schema.optionalKey(Text),
    query: Schema.optionalKey(Text),
    messages: Schema.optionalKey(Schema.Array(InferenceMessage)),
    temperature: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 2 }))),
    max_tokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
    max_completion_tokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
    n: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 128 }))),
    stream: Schema.optionalKey(Schema.Boolean),
    stream_options: Schema.optionalKey(Schema.NullOr(Schema.StructWithRest(
      Schema.Struct({ include_usage: Schema.optionalKey(Schema.Boolean) }),
      Rest
    )))
  }),
  Rest
)
export type InferenceRequest = typeof InferenceRequest.Type

/**
 * What Podium itself reads of a request and does not forward: `model` (Podium chooses), the
 * conversation (sent as `messages`), and `stream`/`stream_options` (Podium asks the upstream for a
 * stream with usage when the caller streams).
 */
const notForwarded = new Set(["model", "messages", "input", "prompt", "question", "query", "stream", "stream_options"])

/**
 * The caller's parameters sent to the upstream as given: all but those Podium reads itself. Built as
 * own properties (`Object.fromEntries`): assigning a `__proto__` key would set the object's
 * prototype instead, dropping the key and lending its properties to every read.
 */
export const forwardedParameters = (request: InferenceRequest): Readonly<Record<string, unknown>> =>
  Object.fromEntries(Object.entries(request).filter(([key]) => !notForwarded.has(key)))

/** The caller's output limit: `max_completion_tokens` (OpenAI's newer name) else `max_tokens`. */
export const requestedMaxTokens = (request: InferenceRequest): number | undefined =>
  request.max_completion_tokens ?? request.max_tokens

/**
 * `parameters` with the output capped at `maxTokens` (a budgeted call's bound, or a deployment's
 * default), under each name the caller used: `max_completion_tokens` when it sent that, `max_tokens`
 * when it sent that or neither.
 */
export const cappedParameters = (
  parameters: Readonly<Record<string, unknown>>,
  maxTokens: number
): Readonly<Record<string, unknown>> => {
  const newer = parameters.max_completion_tokens !== undefined
  return {
    ...parameters,
    ...(newer ? { max_completion_tokens: maxTokens } : {}),
    ...(!newer || parameters.max_tokens !== undefined ? { max_tokens: maxTokens } : {})
  }
}
