import { Result } from "effect"
import { type ChatMessage, InvalidInput } from "../shared/index.ts"

export interface PromptInput {
  readonly input?: string | undefined
  readonly prompt?: string | undefined
  readonly question?: string | undefined
  readonly query?: string | undefined
  readonly messages?: ReadonlyArray<ChatMessage> | undefined
}

const textFields = ["input", "prompt", "question", "query"] as const

/** A conversation and its input: the (last) user message's content, else the last message's. */
export interface Prompt {
  readonly input: string
  readonly messages: ReadonlyArray<ChatMessage>
}

/**
 * The caller's conversation, the one request rule of leaderboard and model inference (and of
 * dataset rows). The input is `messages` when given (non-empty); then any of input, prompt, question
 * and query sent alongside is ignored (the request is an open object, and OpenAI-style clients send
 * extra fields). Otherwise it is exactly one of those four, as the user's message.
 */
export const requestMessages = (request: PromptInput): Result.Result<Prompt, InvalidInput> => {
  const given = textFields.filter((field) => request[field] !== undefined)
  if (request.messages !== undefined && request.messages.length > 0) {
    const { messages } = request
    const input = messages.findLast((m) => m.role === "user") ?? messages[messages.length - 1]!
    return Result.succeed({ input: input.content, messages })
  }
  if (given.length !== 1) {
    return Result.fail(new InvalidInput({
      message: "Give the input as messages or as exactly one of input, prompt, question and query",
      path: given.length > 1 ? [given[1]!] : ["messages"]
    }))
  }
  const input = request[given[0]!]!
  return Result.succeed({ input, messages: [{ role: "user", content: input }] })
}

/**
 * The conversation sent to a leaderboard's candidate: the caller's (`requestMessages`) in the
 * challenge's words. Its `model_prompt` is a template for the (last) user message: `{input}` is
 * replaced by the input, and without the placeholder the input follows the template after a blank
 * line. `system_prompt`, when set, leads as a system message unless the caller sent one.
 */
export const buildMessages = (
  request: PromptInput,
  challenge: { readonly system_prompt: string | null; readonly model_prompt: string | null }
): Result.Result<Prompt, InvalidInput> =>
  Result.map(requestMessages(request), ({ input, messages: given }) => {
    const apply = (text: string) =>
      challenge.model_prompt === null || challenge.model_prompt === ""
        ? text
        : challenge.model_prompt.includes("{input}")
        ? challenge.model_prompt.split("{input}").join(text)
        : `${challenge.model_prompt}\n\n${text}`
    const messages = [...given]
    const last = messages.map((m) => m.role).lastIndexOf("user")
    if (last >= 0) messages[last] = { role: "user", content: apply(messages[last]!.content) }
    if (challenge.system_prompt !== null && challenge.system_prompt !== "" && !messages.some((m) => m.role === "system")) {
      messages.unshift({ role: "system", content: challenge.system_prompt })
    }
    return { input, messages }
  })
