/** One turn of a conversation: what callers send, candidates are asked and datasets keep. */
export interface ChatMessage {
  readonly role: string
  readonly content: string
}

/**
 * A turn of OpenAI's chat-completions request as the caller sent it, on the serving path: `content`
 * a string, null (an assistant turn with `tool_calls`) or an array of parts (`text`, `image_url`,
 * ...), with any other property (`tool_calls`, `tool_call_id`, `name`) kept. A `ChatMessage` is one.
 */
export interface RequestMessage {
  readonly role: string
  readonly content?: unknown
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A message's text: its string content, else its `text` parts joined by a newline; null when it has none. */
export const messageText = (message: RequestMessage): string | null => {
  const { content } = message
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return null
  const texts: Array<string> = []
  for (const part of content) if (isRecord(part) && part.type === "text" && typeof part.text === "string") texts.push(part.text)
  return texts.length === 0 ? null : texts.join("\n")
}
