import { DateTime, Option, Schema } from "effect"
import { type Candidate, type Leaderboard, LeaderboardId } from "../leaderboards/index.ts"
import type { PromptInput } from "../inference/index.ts"
import { type ChatMessage, Uuid } from "../shared/index.ts"

export const LabelJobId = Uuid.pipe(Schema.brand("LabelJobId"))
export type LabelJobId = typeof LabelJobId.Type

export const LabelJobStatus = Schema.Literals(["running", "succeeded", "failed"])

/**
 * An auto-labels job: fills the missing references of version `base_version`'s rows with the
 * labeller's answers, then publishes them as a new version (`version`). Given references are never
 * replaced; a row the labeller fails on (after retries) stays without one and counts in `failed`.
 */
export class LabelJob extends Schema.Class<LabelJob>("LabelJob")({
  id: LabelJobId,
  leaderboard_id: LeaderboardId,
  base_version: Schema.Int,
  labeller: Schema.String,
  status: LabelJobStatus,
  total: Schema.Int,
  labelled: Schema.Int,
  failed: Schema.Int,
  version: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** Who labels: the leaderboard's judge model (through the workspace's integration), else its serving candidate (any platform). */
export type Labeller =
  | { readonly _tag: "Judge"; readonly provider: "router" | "hub"; readonly model: string }
  | { readonly _tag: "Candidate"; readonly candidate: Candidate }

export const labellerOf = (
  leaderboard: Pick<Leaderboard, "challenge">,
  serving: Candidate | undefined
): Option.Option<Labeller> => {
  const { judge_model, judge_provider } = leaderboard.challenge
  if ((judge_provider === "router" || judge_provider === "hub") && judge_model !== null && judge_model.trim() !== "") {
    return Option.some({ _tag: "Judge", provider: judge_provider, model: judge_model })
  }
  return serving === undefined ? Option.none() : Option.some({ _tag: "Candidate", candidate: serving })
}

export const labellerName = (labeller: Labeller): string =>
  labeller._tag === "Judge" ? `${labeller.provider}:${labeller.model}` : labeller.candidate.model_name ?? labeller.candidate.name

const asText = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value) ?? ""

/** What a stored row asks, in the shape the prompt builder takes (message contents as text). */
export const promptInputOf = (row: Record<string, unknown>): PromptInput => {
  const messages = row["messages"]
  if (Array.isArray(messages) && messages.length > 0) {
    return {
      messages: messages.map((m): ChatMessage => {
        const message = typeof m === "object" && m !== null ? m as Record<string, unknown> : {}
        return { role: asText(message["role"] ?? "user"), content: asText(message["content"] ?? "") }
      })
    }
  }
  for (const field of ["input", "prompt", "question", "query"] as const) {
    const value = row[field]
    if (typeof value === "string" && value.trim() !== "") return { [field]: value }
  }
  return {}
}

/** The `labelling` object of the status answer. */
export const labelJobView = (job: LabelJob) => ({
  job_id: job.id,
  status: job.status,
  base_version: job.base_version,
  labeller: job.labeller,
  total: job.total,
  labelled: job.labelled,
  failed: job.failed,
  remaining: Math.max(0, job.total - job.labelled - job.failed),
  version: job.version,
  error: job.error,
  created_at: DateTime.formatIso(job.created_at),
  finished_at: job.finished_at === null ? null : DateTime.formatIso(job.finished_at)
})
export type LabelJobView = ReturnType<typeof labelJobView>
