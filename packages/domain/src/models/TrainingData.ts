import type { LeaderboardId } from "../leaderboards/index.ts"
import type { ChatMessage } from "../shared/index.ts"
import { seededRandom } from "../runs/index.ts"
import type { SelectionAlgorithm } from "./Model.ts"
import type { TrainingExample } from "./FineTuneRepository.ts"

/** A consolidated row a model can learn from: the prompt as its leaderboard asks it, and the reference. */
export interface LearnableRow {
  readonly leaderboard_id: LeaderboardId
  readonly input: string
  readonly reference: string
  readonly messages: ReadonlyArray<ChatMessage>
  /** 0 for its dataset's oldest row, 1 for its newest: rows of several leaderboards compare by age. */
  readonly recency: number
}

/**
 * The rows a fine-tune uses: `LAST_N` the newest `limit` (by recency; earlier rows of equal
 * recency first), `WEIGHTED_SHUFFLE` a seeded sample of `limit` without replacement where a row's
 * weight grows with its recency (0.25 for the oldest to 1.25 for the newest: old rows still count,
 * new ones five times as much; Efraimidis–Spirakis keys). `limit` null: every row.
 */
export const selectRows = (
  rows: ReadonlyArray<LearnableRow>,
  options: { readonly algorithm: SelectionAlgorithm; readonly limit: number | null; readonly seed: string }
): ReadonlyArray<LearnableRow> => {
  const limit = options.limit === null ? rows.length : Math.max(0, Math.min(rows.length, options.limit))
  if (options.algorithm === "LAST_N") {
    return rows.map((row, i) => ({ row, i }))
      .sort((a, b) =>
        b.row.recency - a.row.recency ||
        // Stryker disable next-line ArithmeticOperator: equivalent on V8 (as `+`): its stable sort only asks whether the later row goes first
        a.i - b.i
      )
      .slice(0, limit)
      .sort((a, b) => a.i - b.i)
      .map(({ row }) => row)
  }
  const random = seededRandom(`${options.seed}:select`)
  return rows
    .map((row) => ({ row, key: Math.pow(random(), 1 / (0.25 + row.recency)) }))
    .sort((a, b) => b.key - a.key)
    .slice(0, limit)
    .map(({ row }) => row)
}

/**
 * Splits the chosen rows into training and held-out rows: a seeded `share` of them (at least one
 * when the share is above 0 and there are two rows or more) is held out, never trained on.
 */
export const holdOut = <A>(
  rows: ReadonlyArray<A>,
  share: number,
  seed: string
): { readonly training: ReadonlyArray<A>; readonly held_out: ReadonlyArray<A> } => {
  const wanted = share <= 0 || rows.length < 2 ? 0 : Math.min(rows.length - 1, Math.max(1, Math.round(rows.length * share)))
  const random = seededRandom(`${seed}:held_out`)
  const order = rows.map((_, i) => ({ i, key: random() })).sort((a, b) => a.key - b.key)
  const held = new Set(order.slice(0, wanted).map(({ i }) => i))
  return {
    training: rows.filter((_, i) => !held.has(i)),
    held_out: rows.filter((_, i) => held.has(i))
  }
}

/** The examples a run stores: training rows first, then held-out rows, numbered in that order. */
export const examplesOf = (split: {
  readonly training: ReadonlyArray<LearnableRow>
  readonly held_out: ReadonlyArray<LearnableRow>
}): ReadonlyArray<TrainingExample> => [
  ...split.training.map((row) => ({ row, split: "training" as const })),
  ...split.held_out.map((row) => ({ row, split: "held_out" as const }))
].map(({ row, split }, index) => ({
  index,
  split,
  leaderboard_id: row.leaderboard_id,
  input: row.input,
  reference: row.reference,
  messages: row.messages
}))

/** One line of an OpenAI chat fine-tuning file: the conversation, then the reference as the assistant's turn. */
export const chatLine = (example: Pick<TrainingExample, "messages" | "reference">): string =>
  JSON.stringify({ messages: [...example.messages, { role: "assistant", content: example.reference }] })

export const chatJsonl = (examples: ReadonlyArray<Pick<TrainingExample, "messages" | "reference">>): string =>
  examples.map((e) => `${chatLine(e)}\n`).join("")

/** Up to `size` seeded, distinct picks of `rows`, in their order. */
export const pick = <A>(rows: ReadonlyArray<A>, size: number, seed: string): ReadonlyArray<A> => {
  const random = seededRandom(seed)
  return rows.map((row, i) => ({ row, i, key: random() }))
    .sort((a, b) => a.key - b.key)
    .slice(0, Math.max(0, size))
    .sort((a, b) => a.i - b.i)
    .map(({ row }) => row)
}

/**
 * `few_shot`'s search: demonstration sets to try, `trials` seeded sets of each size (sizes the pool
 * cannot fill are left out), the empty set (the base model as it is) first.
 */
export const demonstrationSets = <A>(
  pool: ReadonlyArray<A>,
  sizes: ReadonlyArray<number>,
  trials: number,
  seed: string
): ReadonlyArray<ReadonlyArray<A>> => [
  [],
  ...sizes.filter((size) => size <= pool.length).flatMap((size) =>
    Array.from({ length: size === pool.length ? 1 : trials }, (_, trial) => pick(pool, size, `${seed}:demos:${size}:${trial}`))
  )
]
