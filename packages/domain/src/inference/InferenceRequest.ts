import { Schema } from "effect"

const Text = Schema.String.check(Schema.isMaxLength(1_000_000))

/**
 * An inference request, through a leaderboard or a model alike. Its input becomes the conversation
 * by `requestMessages` (Prompt.ts): `messages` when non-empty, else exactly one of input,
 * prompt, question and query. Open: other properties (e.g. `model` from OpenAI clients) are
 * accepted and ignored.
 */
export const InferenceRequest = Schema.StructWithRest(
  Schema.Struct({
    input: Schema.optionalKey(Text),
    prompt: Schema.optionalKey(Text),
    question: Schema.optionalKey(Text),
    query: Schema.optionalKey(Text),
    messages: Schema.optionalKey(Schema.Array(Schema.Struct({ role: Schema.String, content: Text }))),
    temperature: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 2 }))),
    max_tokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
    stream: Schema.optionalKey(Schema.Boolean)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type InferenceRequest = typeof InferenceRequest.Type
