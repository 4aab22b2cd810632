import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Cell, CandidateResult, PairwiseResult, Run, RunDataset, RunRow, RunStatus } from "./Run.ts"
import type { LeaderboardId, ServingDecision } from "../leaderboards/index.ts"
import type { RunId } from "../shared/index.ts"
import type { RunInProgress } from "./RunErrors.ts"

/** A candidate's cells, counted: what ranking needs. Latencies are of answered calls. */
export interface CellTally {
  readonly candidate_id: string
  readonly correct: number
  /** Cells with a verdict. */
  readonly total: number
  readonly errors: number
  readonly latency_ms_p50: number | null
  readonly latency_ms_p95: number | null
  readonly total_cost_usd: number | null
}

/** One row of a run's results: the row and every candidate's cell for it (those answered so far). */
export interface ResultRow {
  readonly index: number
  readonly input: string
  readonly reference: string | null
  readonly cells: ReadonlyArray<Cell>
}

/** One cell's verdict, as paired comparison reads it: null when it has none or has an error (a failed call, a judge's failure). */
export interface CellVerdict {
  readonly row_index: number
  readonly candidate_id: string
  readonly verdict: "correct" | "incorrect" | null
  /** The call was answered (an output came back): what a cost per call divides by. */
  readonly answered: boolean
}

export interface RunEnd {
  readonly status: Extract<RunStatus, "succeeded" | "failed" | "cancelled">
  readonly results: ReadonlyArray<CandidateResult>
  /** The ranking's top: recorded on the run, it serves only if `serving` names it. */
  readonly winner: string | null
  readonly error: string | null
  /** The candidate the ranking serves from now on (`ranking_winner`), set only if the run ends succeeded; null: unchanged. */
  readonly serving?: string | null | undefined
  readonly pairwise?: ReadonlyArray<PairwiseResult> | null | undefined
  readonly serving_decision?: ServingDecision | null | undefined
}

/**
 * Runs, the rows they ask and their cells. A leaderboard has at most one active (queued or running)
 * run, enforced by the database; while it has one, its `status` is `running` and the status it had
 * is restored when the run ends (unless a client changed it meanwhile). A run's rows are fixed once
 * stored, and a cell is written once: a repeated write (an activity run again) changes nothing.
 */
export class RunRepository extends Context.Service<RunRepository, {
  /** Stores the queued run and marks its leaderboard running; RunInProgress names the active run otherwise. */
  readonly create: (run: Run) => Effect.Effect<void, RunInProgress>
  /** Runs still queued that were created before `cutoff`: their job may never have been enqueued. */
  readonly queuedBefore: (cutoff: DateTime.Utc) => Effect.Effect<ReadonlyArray<Run>>
  /** The run's status alone: cheap enough to look at while it runs. */
  readonly status: (id: RunId) => Effect.Effect<Option.Option<RunStatus>>
  /** With progress counted now while the run is active. */
  readonly find: (id: RunId) => Effect.Effect<Option.Option<Run>>
  /** Newest first. */
  readonly list: (
    leaderboardId: LeaderboardId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<Run>>
  /** Stores the run's rows and marks it running, once; false when the rows were stored before (or it ended). */
  readonly start: (runId: RunId, dataset: RunDataset, rows: ReadonlyArray<RunRow>, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Rows with index in [from, to) that have no cell of the candidate yet, in index order. */
  readonly pendingRows: (runId: RunId, candidateId: string, from: number, to: number) => Effect.Effect<ReadonlyArray<RunRow>>
  /** Once per (row, candidate), while the run is running; text Postgres cannot hold is stored as U+FFFD. */
  readonly saveCell: (runId: RunId, cell: Cell, now: DateTime.Utc) => Effect.Effect<void>
  readonly tallies: (runId: RunId) => Effect.Effect<ReadonlyArray<CellTally>>
  /** Every cell's verdict, in one read (a 10,000-row run of 5 candidates has 50,000): what paired comparison needs. */
  readonly verdicts: (runId: RunId) => Effect.Effect<ReadonlyArray<CellVerdict>>
  /**
   * Ends an active run and gives its leaderboard back its status, and (ending succeeded) has the
   * ranking serve `end.serving`, in one transaction; false when it had ended already.
   */
  readonly end: (runId: RunId, end: RunEnd, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Rows in index order with their cells. */
  readonly results: (
    runId: RunId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<ResultRow>>
}>()("@podium/domain/runs/RunRepository") {}
