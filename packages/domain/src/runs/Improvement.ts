import { DateTime, Schema } from "effect"
import { LeaderboardId } from "../leaderboards/index.ts"
import { Uuid } from "../shared/index.ts"
import type { RunRow } from "./Run.ts"
import { exactMatch } from "./Scoring.ts"

export const ImprovementId = Uuid.pipe(Schema.brand("ImprovementId"))
export type ImprovementId = typeof ImprovementId.Type

export const ImprovementStatus = Schema.Literals(["running", "succeeded", "failed"])

/**
 * An improve-dataset job: the judge model proposes references for the dataset's rows that lack one
 * and, with `replace_references`, for rows where the latest run's candidates disagree. Its references
 * form the dataset's next derived version (`version`), which runs read over the dataset's own rows
 * (marked `label_source: "improved"`); the dataset itself is not changed.
 */
export class Improvement extends Schema.Class<Improvement>("Improvement")({
  id: ImprovementId,
  leaderboard_id: LeaderboardId,
  status: ImprovementStatus,
  labeller: Schema.String,
  replace_references: Schema.Boolean,
  total: Schema.Int,
  improved: Schema.Int,
  failed: Schema.Int,
  version: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

export const improvementView = (job: Improvement) => ({
  id: job.id,
  leaderboard_id: job.leaderboard_id,
  status: job.status,
  labeller: job.labeller,
  replace_references: job.replace_references,
  total: job.total,
  improved: job.improved,
  failed: job.failed,
  version: job.version,
  error: job.error,
  created_at: DateTime.formatIso(job.created_at),
  finished_at: job.finished_at === null ? null : DateTime.formatIso(job.finished_at)
})

/** A row to improve: the row, and what the latest run's candidates answered to it (hints for the judge). */
export interface ImprovementTarget extends RunRow {
  readonly answers: ReadonlyArray<string>
}

/** Candidates disagree when two of their answers do not match each other (exact scoring's rule). */
export const disagree = (answers: ReadonlyArray<string>): boolean =>
  answers.some((answer) => !exactMatch(answer, answers[0]!))

/** The rows to improve: those without a reference, and (with `replace`) those the candidates disagree on. */
export const improvementTargets = (
  rows: ReadonlyArray<ImprovementTarget>,
  replace: boolean
): ReadonlyArray<ImprovementTarget> => rows.filter((row) => row.reference === null || (replace && disagree(row.answers)))

/** The judge's task when it proposes a reference: the answer alone, with the candidates' answers as hints. */
export const referenceRequest = (target: ImprovementTarget) => ({
  messages: [
    {
      role: "system",
      content: "You write the reference answer for an evaluation dataset. Give the correct answer to the question, " +
        "as short as it can be while complete, with no explanation. Other models' answers are shown as hints; " +
        "they may be wrong."
    },
    {
      role: "user",
      content: [
        `<question>\n${target.input}\n</question>`,
        ...target.answers.map((answer, i) => `<hint model="${i + 1}">\n${answer}\n</hint>`)
      ].join("\n")
    }
  ]
})
