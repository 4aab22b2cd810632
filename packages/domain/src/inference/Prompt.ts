import { Result } from "effect"
import { type ChatMessage, InvalidInput, messageText, type RequestMessage } from "../shared/index.ts"

export interface PromptInput<M extends RequestMessage = ChatMessage> {
  readonly input?: string | undefined
  readonly prompt?: string | undefined
  readonly question?: string | undefined
  readonly query?: string | undefined
  readonly messages?: ReadonlyArray<M> | undefined
}

const textFields = ["input", "prompt", "question", "query"] as const

/**
 * A conversation and its input: the (last) user message's text, else the last message's (a
 * message's text: its string content, else its text parts; "" when it has none, e.g. an image alone).
 */
export interface Prompt<M extends RequestMessage = ChatMessage> {
  readonly input: string
  readonly messages: ReadonlyArray<M | ChatMessage>
}

/**
 * The caller's conversation, the one request rule of leaderboard and model inference (and of
 * dataset rows). The input is `messages` when given (non-empty); then any of input, prompt, question
 * and query sent alongside is ignored (the request is an open object, and OpenAI-style clients send
 * extra fields). Otherwise it is exactly one of those four, as the user's message.
 */
export const requestMessages = <M extends RequestMessage = ChatMessage>(
  request: PromptInput<M>
): Result.Result<Prompt<M>, InvalidInput> => {
  const given = textFields.filter((field) => request[field] !== undefined)
  if (request.messages !== undefined && request.messages.length > 0) {
    const { messages } = request
    const input = messages.findLast((m) => m.role === "user") ?? messages[messages.length - 1]!
    return Result.succeed({ input: messageText(input) ?? "", messages })
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
 * line; a message given as parts has the template applied to its last text part (one is added after
 * the others when it has none). `system_prompt`, when set, leads as a system message unless the
 * caller sent one. Every other property of a message is kept.
 */
export const buildMessages = <M extends RequestMessage = ChatMessage>(
  request: PromptInput<M>,
  challenge: { readonly system_prompt: string | null; readonly model_prompt: string | null }
): Result.Result<Prompt<M>, InvalidInput> =>
  Result.map(requestMessages(request), ({ input, messages: given }) => {
    const template = challenge.model_prompt ?? ""
    const apply = (text: string) =>
      template.includes("{input}") ? template.split("{input}").join(text) : `${template}\n\n${text}`
    const messages = [...given]
    const last = messages.map((m) => m.role).lastIndexOf("user")
    if (last >= 0 && template !== "") messages[last] = templated(messages[last]!, apply)
    if (challenge.system_prompt !== null && challenge.system_prompt !== "" && !messages.some((m) => m.role === "system")) {
      messages.unshift({ role: "system", content: challenge.system_prompt })
    }
    return { input, messages }
  })

/** `message` with `apply` on its text: the string content, else the last text part (else a text part added for it). */
const templated = <M extends RequestMessage>(message: M, apply: (text: string) => string): M | ChatMessage => {
  const { content } = message
  if (typeof content === "string") return { ...message, content: apply(content) }
  if (!Array.isArray(content)) return message
  const parts = [...content]
  const last = parts.findLastIndex((p) => typeof p === "object" && p !== null && p.type === "text" && typeof p.text === "string")
  if (last >= 0) parts[last] = { ...parts[last], text: apply(parts[last].text) }
  else parts.push({ type: "text", text: apply("") })
  return { ...message, content: parts }
}
