/** One turn of a conversation: what callers send, candidates are asked and datasets keep. */
export interface ChatMessage {
  readonly role: string
  readonly content: string
}
