import { Context, DateTime, Effect, Layer, Option, type Redacted, type Stream } from "effect"
import { PushTokenPrefix, type PushToken, PushTokenRepository, type Principal, TokenSecrets, Unauthenticated } from "../access/index.ts"
import {
  type Leaderboard,
  LeaderboardArchived,
  type LeaderboardId,
  LeaderboardRepository,
  Leaderboards
} from "../leaderboards/index.ts"
import { IdGenerator, type InvalidInput, Links, NotFound, PushTokenId } from "../shared/index.ts"
import {
  checkCollecting,
  checkPushDataset,
  consolidationDue,
  consolidationRules,
  consolidationView,
  type DatasetState,
  DatasetVersion,
  type VersionTrigger
} from "./Dataset.ts"
import {
  type CollectionEnded,
  EventLimitExceeded,
  type LeaderboardPaused,
  type NotPushDataset,
  PushTooLarge
} from "./DatasetErrors.ts"
import { DatasetRepository, type RowToStore } from "./DatasetRepository.ts"
import { DatasetBatchId, DatasetRowId, maxListedRejections, maxPushBytes, maxRowsPerPush, parseRows, type Rejection, rowsOf } from "./DatasetRow.ts"
import { allowance, type EventUsage, isLimited, limitsOf, limitsView, periodsOf, retryAfterSeconds } from "./EventLimits.ts"

export interface PushResult {
  readonly accepted_rows: number
  readonly rejected_rows: number
  /** Rows whose `id` was already stored (retries): accepted, stored once, not counted again. */
  readonly duplicate_rows: number
  readonly status: "accepted" | "partial"
  readonly batch_id: string
  readonly pending_events: number
  readonly limits: ReturnType<typeof limitsView>
  readonly consolidation: ReturnType<typeof consolidationView> & { readonly triggered: "events" | null }
  readonly rejections: ReadonlyArray<Rejection>
}

export interface IssuedPushToken {
  readonly token: PushToken
  readonly secret: Redacted.Redacted<string>
}

type PushRefusal =
  | NotFound
  | Unauthenticated
  | InvalidInput
  | PushTooLarge
  | NotPushDataset
  | LeaderboardArchived
  | LeaderboardPaused
  | CollectionEnded
  | EventLimitExceeded

/** The counts of the periods `now` is in, from what the state stored for its periods. */
const usedNow = (state: DatasetState, now: DateTime.Utc): EventUsage => {
  const periods = periodsOf(now)
  return {
    daily: state.day === periods.day ? state.day_used : 0,
    monthly: state.month === periods.month ? state.month_used : 0
  }
}

/** A version as the API shows it (timestamps as ISO strings). */
export const versionView = (v: DatasetVersion) => ({
  version: v.version,
  row_count: v.row_count,
  added_rows: v.added_rows,
  dropped_duplicates: v.dropped_duplicates,
  labelled_rows: v.labelled_rows,
  trigger: v.trigger,
  sha256: v.sha256,
  created_at: DateTime.formatIso(v.created_at)
})
export type VersionView = ReturnType<typeof versionView>

export interface DatasetStatusView {
  readonly leaderboard_id: LeaderboardId
  readonly dataset_type: "GET" | "PUSH"
  readonly pending_events: number
  readonly latest_version: VersionView | null
  readonly versions: ReadonlyArray<VersionView>
  readonly limits: ReturnType<typeof limitsView>
  readonly consolidation: ReturnType<typeof consolidationView>
  readonly rules: ReturnType<typeof consolidationRules>
  readonly end_date: string | null
  readonly push_url: string
}

/**
 * PUSH datasets: rows pushed with an API token or the leaderboard's push token, counted against the
 * leaderboard's event limits, consolidated into immutable versions and downloaded as JSONL.
 */
export class Datasets extends Context.Service<Datasets, {
  readonly push: (
    principal: Principal,
    id: LeaderboardId,
    body: unknown,
    bodyBytes: number
  ) => Effect.Effect<PushResult, PushRefusal>
  readonly status: (principal: Principal, id: LeaderboardId) => Effect.Effect<DatasetStatusView, NotFound | Unauthenticated>
  readonly download: (
    principal: Principal,
    id: LeaderboardId,
    version: number | undefined
  ) => Effect.Effect<{ readonly version: DatasetVersion; readonly body: Stream.Stream<Uint8Array> }, NotFound | Unauthenticated>
  readonly consolidate: (
    principal: Principal,
    id: LeaderboardId
  ) => Effect.Effect<
    { readonly version: VersionView | null; readonly pending_events: number },
    NotFound | NotPushDataset | LeaderboardArchived
  >
  readonly issueToken: (
    principal: Principal,
    id: LeaderboardId,
    input: { readonly name?: string | undefined; readonly issue_token?: boolean | undefined }
  ) => Effect.Effect<
    { readonly issued: IssuedPushToken | null; readonly tokens: ReadonlyArray<PushToken>; readonly push_url: string },
    NotFound | NotPushDataset | LeaderboardArchived
  >
  readonly revokeTokens: (principal: Principal, id: LeaderboardId) => Effect.Effect<number, NotFound>
  /** Revokes one push token of the leaderboard; NotFound when the leaderboard has no such token. */
  readonly revokeToken: (principal: Principal, id: LeaderboardId, tokenId: PushTokenId) => Effect.Effect<void, NotFound>
  /** Consolidates the leaderboard's pending rows now when a trigger has fired (the jobs' entry). */
  readonly consolidateIfDue: (id: LeaderboardId) => Effect.Effect<Option.Option<DatasetVersion>>
  /** Consolidates whatever is pending, then hashes the version. */
  readonly consolidateNow: (leaderboard: Leaderboard, trigger: VersionTrigger) => Effect.Effect<Option.Option<DatasetVersion>>
}>()("@podium/domain/datasets/Datasets") {
  static readonly layer = Layer.effect(
    Datasets,
    Effect.gen(function*() {
      const repository = yield* DatasetRepository
      const leaderboards = yield* Leaderboards
      const leaderboardRepository = yield* LeaderboardRepository
      const pushTokens = yield* PushTokenRepository
      const secrets = yield* TokenSecrets
      const ids = yield* IdGenerator
      const links = yield* Links
      /** Leaderboards this instance is consolidating: an event trigger while one runs waits for the next push. */
      const consolidating = new Set<string>()

      /** The leaderboard, if the caller's workspace owns it (from this instance's copy). */
      const owned = (principal: Principal, id: LeaderboardId) =>
        Effect.map(leaderboards.serving(principal, id), (s) => s.leaderboard)

      /** As `owned`, for the routes a push token may call: its own leaderboard and nothing else. */
      const visible = (principal: Principal, id: LeaderboardId): Effect.Effect<Leaderboard, NotFound | Unauthenticated> =>
        principal._tag === "PushTokenPrincipal" && principal.leaderboardId !== id
          ? Effect.fail(new Unauthenticated({ message: "This push token belongs to another leaderboard's dataset" }))
          : owned(principal, id)

      const pushDataset = (leaderboard: Leaderboard) => Effect.as(Effect.fromResult(checkPushDataset(leaderboard)), leaderboard)

      const consolidateNow = Effect.fn("Datasets.consolidateNow")(function*(leaderboard: Leaderboard, trigger: VersionTrigger) {
        const created = yield* repository.consolidate({
          leaderboardId: leaderboard.id,
          now: yield* DateTime.now,
          trigger,
          ...consolidationRules(leaderboard.challenge)
        })
        if (Option.isNone(created)) return created
        const sha256 = yield* repository.hash(leaderboard.id, created.value.version)
        yield* Effect.logInfo("dataset consolidated").pipe(Effect.annotateLogs({
          leaderboard_id: leaderboard.id,
          version: created.value.version,
          rows: created.value.row_count,
          trigger
        }))
        return Option.some(new DatasetVersion({ ...created.value, sha256 }))
      })

      const consolidateIfDue = Effect.fn("Datasets.consolidateIfDue")(function*(id: LeaderboardId) {
        const leaderboard = yield* leaderboardRepository.find(id)
        // an archived leaderboard is read-only: its pending rows wait until it is active again
        if (
          Option.isNone(leaderboard) || leaderboard.value.challenge.dataset_type !== "PUSH" ||
          leaderboard.value.status === "archived"
        ) return Option.none()
        const due = consolidationDue(leaderboard.value.challenge, yield* repository.state(id), yield* DateTime.now)
        return due === null ? Option.none() : yield* consolidateNow(leaderboard.value, due)
      })

      /** Starts an event-count consolidation off the request path, unless this instance runs one already. */
      const startConsolidation = (leaderboard: Leaderboard, trigger: VersionTrigger) =>
        consolidating.has(leaderboard.id) ? Effect.void : Effect.suspend(() => {
          consolidating.add(leaderboard.id)
          return consolidateNow(leaderboard, trigger).pipe(
            Effect.catchCause((cause) => Effect.logError("consolidation failed; the jobs will retry", cause)),
            Effect.ensuring(Effect.sync(() => consolidating.delete(leaderboard.id))),
            Effect.forkDetach,
            Effect.asVoid
          )
        })

      const push = Effect.fn("Datasets.push")(function*(principal: Principal, id: LeaderboardId, body: unknown, bodyBytes: number) {
        if (bodyBytes > maxPushBytes) {
          return yield* new PushTooLarge({ message: `A push carries at most ${maxPushBytes} bytes; this one has ${bodyBytes}` })
        }
        const rows = yield* Effect.fromResult(rowsOf(body))
        if (rows.length > maxRowsPerPush) {
          return yield* new PushTooLarge({ message: `A push carries at most ${maxRowsPerPush} rows; this one has ${rows.length}` })
        }
        const now = yield* DateTime.now
        const leaderboard = yield* visible(principal, id)
        yield* Effect.fromResult(checkCollecting(leaderboard, now))
        const { accepted, rejected } = parseRows(rows)
        const batchId = yield* ids.make(DatasetBatchId)
        const rowIds = yield* ids.makeMany(DatasetRowId, accepted.length)
        const toStore: Array<RowToStore> = accepted.map((row, i) => ({ ...row, id: rowIds[i]! }))
        const limits = limitsOf(leaderboard.challenge)
        const result = yield* repository.append({
          leaderboardId: id,
          batchId,
          rows: toStore,
          now,
          periods: periodsOf(now),
          allowance: isLimited(limits) ? (used) => allowance(limits, used) : undefined
        })
        const { state } = result
        const used = usedNow(state, now)
        const view = limitsView(limits, used, now)
        // 429 only when every row is refused for the limits (a push with invalid rows too gets their rejections)
        if (result.overLimit.length > 0 && result.overLimit.length === rows.length) {
          return yield* new EventLimitExceeded({
            leaderboard_id: id,
            retry_after_seconds: retryAfterSeconds(limits, used, now),
            limits: view
          })
        }
        const rejections = [
          ...rejected,
          ...result.overLimit.map((index): Rejection => ({
            index,
            code: "event_limit_exceeded",
            message: "Over the leaderboard's daily or monthly event limit"
          }))
        ].sort((a, b) => a.index - b.index)
        const due = consolidationDue(leaderboard.challenge, state, now)
        if (due === "events") yield* startConsolidation(leaderboard, due)
        return {
          accepted_rows: result.stored.length + result.retried.length,
          rejected_rows: rejections.length,
          duplicate_rows: result.retried.length,
          status: rejections.length === 0 ? "accepted" : "partial",
          batch_id: batchId,
          pending_events: state.pending,
          limits: view,
          consolidation: { ...consolidationView(leaderboard.challenge, state), triggered: due === "events" ? "events" as const : null },
          rejections: rejections.slice(0, maxListedRejections)
        } satisfies PushResult
      })

      const status = Effect.fn("Datasets.status")(function*(principal: Principal, id: LeaderboardId) {
        const leaderboard = yield* visible(principal, id)
        const { state, versions } = yield* repository.snapshot(id)
        const now = yield* DateTime.now
        const latest = versions[0]
        return {
          leaderboard_id: id,
          dataset_type: leaderboard.challenge.dataset_type,
          pending_events: state.pending,
          latest_version: latest === undefined ? null : versionView(latest),
          versions: versions.map(versionView),
          limits: limitsView(limitsOf(leaderboard.challenge), usedNow(state, now), now),
          consolidation: consolidationView(leaderboard.challenge, state),
          rules: consolidationRules(leaderboard.challenge),
          end_date: leaderboard.challenge.end_date,
          push_url: links.datasetPushUrl(id)
        } satisfies DatasetStatusView
      })

      const download = Effect.fn("Datasets.download")(function*(principal: Principal, id: LeaderboardId, version: number | undefined) {
        yield* visible(principal, id)
        const versions = yield* repository.versions(id)
        const chosen = version === undefined ? versions[0] : versions.find((v) => v.version === version)
        if (chosen === undefined) {
          return yield* new NotFound({ resource: "dataset version", id: version === undefined ? "latest" : String(version) })
        }
        return { version: chosen, body: repository.download(id, chosen.version) }
      })

      const consolidate = Effect.fn("Datasets.consolidate")(function*(principal: Principal, id: LeaderboardId) {
        const leaderboard = yield* Effect.flatMap(owned(principal, id), pushDataset)
        if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: id })
        const created = yield* consolidateNow(leaderboard, "manual")
        const state = yield* repository.state(id)
        return { version: Option.isSome(created) ? versionView(created.value) : null, pending_events: state.pending }
      })

      const issueToken = Effect.fn("Datasets.issueToken")(function*(
        principal: Principal,
        id: LeaderboardId,
        input: { readonly name?: string | undefined; readonly issue_token?: boolean | undefined }
      ) {
        const leaderboard = yield* Effect.flatMap(owned(principal, id), pushDataset)
        let issued: IssuedPushToken | null = null
        if (input.issue_token !== false) {
          if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: id })
          const minted = yield* secrets.mint(PushTokenPrefix)
          const token: PushToken = {
            id: yield* ids.make(PushTokenId),
            workspace_id: leaderboard.workspace_id,
            leaderboard_id: id,
            name: input.name ?? "push token",
            display_prefix: minted.displayPrefix,
            created_at: yield* DateTime.now,
            last_used_at: null,
            revoked_at: null
          }
          yield* pushTokens.insert(token, minted.hash)
          issued = { token, secret: minted.secret }
        }
        return { issued, tokens: yield* pushTokens.list(id), push_url: links.datasetPushUrl(id) }
      })

      const revokeTokens = Effect.fn("Datasets.revokeTokens")(function*(principal: Principal, id: LeaderboardId) {
        yield* owned(principal, id)
        return yield* pushTokens.revokeAll(id, yield* DateTime.now)
      })

      const revokeToken = Effect.fn("Datasets.revokeToken")(function*(
        principal: Principal,
        id: LeaderboardId,
        tokenId: PushTokenId
      ) {
        yield* owned(principal, id)
        if (!(yield* pushTokens.revoke(id, tokenId, yield* DateTime.now))) {
          return yield* new NotFound({ resource: "push token", id: tokenId })
        }
      })

      return Datasets.of({ push, status, download, consolidate, issueToken, revokeTokens, revokeToken, consolidateIfDue, consolidateNow })
    })
  )
}
