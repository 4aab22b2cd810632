/** OpenAI chat-completion stream chunks for tests: a chunk with `delta`, and a chunk as its `data:` event. */
export const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: "gen-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "acme/tiny",
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra
})

export const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`

/** The usage-only chunk's event (`choices` empty), as OpenAI sends it last when asked. */
export const usageEventOf = (usage: Record<string, number>) => event({ ...chunk({}), choices: [], usage })

/** OpenRouter's stream of "Bonjour é😀": a comment, the deltas, the finish, `usageEvent`, [DONE]. */
export const bonjourScript = (usageEvent: string) =>
  [
    ": OPENROUTER PROCESSING\n\n",
    event(chunk({ role: "assistant", content: "" })),
    event(chunk({ content: "Bon" })),
    event(chunk({ content: "jour é😀" })),
    event({ ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    usageEvent,
    "data: [DONE]\n\n"
  ].join("")
