import { PgClient } from "@effect/sql-pg"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import {
  Attachment,
  CaseResponse,
  type CaseStatus,
  caseStatus,
  contributionOf,
  fromTallies,
  HumanCase,
  Review,
  ReviewInput,
  reviewState,
  Slot,
  Stage,
  type CaseId,
  type Tallies,
  type Tally,
  type CaseCounts,
  type CaseKey,
  type CaseListItem,
  HumanCaseRepository,
  type RankingCohort,
  type ReviewHistoryEntry,
  ResponseRefused,
  changesServing,
  commonVerdicts,
  type HumanServingEntry,
  humanServing,
  humanServingEntry,
  type VerdictCase,
  type Verdict,
} from "@podium/domain/human"
import {
  defaultServingPolicy,
  type LeaderboardId,
  LeaderboardRepository,
  ServingHistory,
  ServingPolicy
} from "@podium/domain/leaderboards"
import { addUsd, storableText, type WorkspaceId } from "@podium/domain/shared"
import { toDate, toDateOrNull } from "../Rows.ts"

/** jsonb columns hold the JSON encoding of the domain's schemas (timestamps as ISO strings). */
const json = <S extends Schema.Top & { readonly DecodingServices: never; readonly EncodingServices: never }>(schema: S) => {
  const codec = Schema.toCodecJson(schema)
  return {
    encode: Schema.encodeSync(codec) as (value: S["Type"]) => unknown,
    decode: Schema.decodeUnknownSync(codec) as (value: unknown) => S["Type"]
  }
}
const ReviewJson = json(Review)
const ReviewInputJson = json(ReviewInput)
const SlotsJson = json(Schema.Array(Slot))
const AttachmentsJson = json(Schema.Array(Attachment))
const UsageJson = json(Schema.NullOr(CaseResponse.fields.usage))
const ServingPolicyJson = json(ServingPolicy)

interface CaseRow {
  readonly id: CaseId
  readonly leaderboard_id: LeaderboardId
  readonly workspace_id: WorkspaceId
  readonly input: string
  readonly context: string
  readonly prompt_override: string | null
  readonly prompt: string
  readonly attachments: unknown
  readonly configuration: string
  readonly creation_key: string
  readonly revision: number
  readonly stage: CaseStatus
  readonly claim_id: string | null
  readonly claimed_at: Date | null
  readonly slots: unknown
  readonly generated_at: Date | null
  readonly review: unknown
  readonly revealed_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

interface ResponseRow {
  readonly id: string
  readonly candidate_id: string
  readonly label: string
  readonly status: "succeeded" | "failed"
  readonly output: string | null
  readonly error: string | null
  readonly latency_ms: number | null
  readonly usage: unknown
  readonly cost_usd: number | null
  readonly trace_id: string | null
  readonly created_at: Date
}

interface TallyRow extends Tally {
  readonly candidate_id: string
  readonly common: boolean
}

const utc = (date: Date) => DateTime.fromDateUnsafe(date)

/** Tallies as `human_cases.contribution` holds them. */
const encodeTallies = (t: Tallies) => ({
  rows: Object.fromEntries(t.rows),
  common: Object.fromEntries(t.common),
  confirmed: t.confirmed,
  comparable: t.comparable
})

const decodeTallies = (json: unknown): Tallies | undefined => {
  if (json === null || json === undefined) return undefined
  const t = json as ReturnType<typeof encodeTallies>
  return { rows: new Map(Object.entries(t.rows)), common: new Map(Object.entries(t.common)), confirmed: t.confirmed, comparable: t.comparable }
}

const tallyFields = ["correct", "total", "cost_sum", "cost_samples", "cost_missing", "technical_errors"] as const

/** `after` − `before`, as counter rows; rows that would not move are left out. */
const difference = (after: Tallies | undefined, before: Tallies | undefined) => {
  const rows: Array<Record<string, unknown>> = []
  for (const common of [false, true]) {
    const pickMap = (t: Tallies | undefined) => (t === undefined ? new Map<string, Tally>() : common ? t.common : t.rows)
    const a = pickMap(after)
    const b = pickMap(before)
    for (const candidate of new Set([...a.keys(), ...b.keys()])) {
      // a cost's change exactly (a float difference of sums drifts as their sums do)
      const change = (f: typeof tallyFields[number], x: number, y: number) => f === "cost_sum" ? addUsd(x, -y) : x - y
      const delta = Object.fromEntries(tallyFields.map((f) => [f, change(f, a.get(candidate)?.[f] ?? 0, b.get(candidate)?.[f] ?? 0)]))
      if (tallyFields.some((f) => delta[f] !== 0)) rows.push({ candidate_id: candidate, common, ...delta })
    }
  }
  return {
    rows,
    confirmed: (after?.confirmed ?? 0) - (before?.confirmed ?? 0),
    comparable: (after?.comparable ?? 0) - (before?.comparable ?? 0)
  }
}

/** The stored responses in the order of the slots; slots not answered yet have none. */
const inSlotOrder = (slots: ReadonlyArray<Slot>, rows: ReadonlyArray<ResponseRow>): Array<CaseResponse> =>
  slots.flatMap((slot) => {
    const row = rows.find((r) => r.id === slot.response_id)
    return row === undefined ? [] : [toResponse(slot, row)]
  })

const toResponse = (slot: Slot, row: ResponseRow): CaseResponse => ({
  ...slot,
  status: row.status,
  output: row.output,
  error: row.error,
  latency_ms: row.latency_ms,
  usage: UsageJson.decode(row.usage),
  cost_usd: row.cost_usd,
  trace_id: row.trace_id,
  created_at: utc(row.created_at)
})

const slotsOf = (row: CaseRow) => (row.slots === null ? [] : SlotsJson.decode(row.slots))

/** The stage of each stored status (CaseStatus): a status without one is a compile error. */
const stageOf: { readonly [S in CaseStatus]: (row: CaseRow, responses: ReadonlyArray<ResponseRow>) => Stage } = {
  draft: () => Stage.cases.Draft.make({}),
  generating: (row) =>
    Stage.cases.Generating.make({ claim_id: row.claim_id!, claimed_at: utc(row.claimed_at!), slots: [...slotsOf(row)] }),
  generated: (row, responses) =>
    Stage.cases.Generated.make({
      generated_at: utc(row.generated_at!),
      responses: inSlotOrder(slotsOf(row), responses),
      review: ReviewJson.decode(row.review),
      revealed_at: row.revealed_at === null ? null : utc(row.revealed_at)
    })
}

const toCase = (row: CaseRow, responses: ReadonlyArray<ResponseRow>): HumanCase => {
  const stage = stageOf[row.stage](row, responses)
  return new HumanCase({
    id: row.id,
    leaderboard_id: row.leaderboard_id,
    workspace_id: row.workspace_id,
    input: row.input,
    context: row.context,
    prompt_override: row.prompt_override,
    prompt: row.prompt,
    attachments: AttachmentsJson.decode(row.attachments),
    configuration: row.configuration,
    creation_key: row.creation_key,
    revision: row.revision,
    stage,
    created_at: utc(row.created_at),
    updated_at: utc(row.updated_at)
  })
}

/** The stage as columns: what `human_cases` stores for each variant. */
const stageColumns = (c: HumanCase) => {
  const none = { claim_id: null, claimed_at: null, slots: null, generated_at: null, review: Review.cases.Unreviewed.make({}), revealed_at: null }
  const columns = Stage.match(c.stage, {
    Draft: () => none,
    Generating: (s) => ({ ...none, claim_id: s.claim_id, claimed_at: toDate(s.claimed_at), slots: SlotsJson.encode(s.slots) }),
    Generated: (s) => ({
      claim_id: "completed",
      claimed_at: null,
      slots: SlotsJson.encode(s.responses),
      generated_at: toDate(s.generated_at),
      review: s.review,
      revealed_at: toDateOrNull(s.revealed_at)
    })
  })
  return { ...columns, stage: caseStatus(c), review_state: reviewState(c), review: ReviewJson.encode(columns.review) }
}

const caseColumns = "id, leaderboard_id, workspace_id, input, context, prompt_override, prompt, attachments, configuration, " +
  "creation_key, revision, stage, claim_id, claimed_at, slots, generated_at, review, revealed_at, created_at, updated_at"
const responseColumns = ["id", "candidate_id", "label", "status", "output", "error", "latency_ms", "usage", "cost_usd", "trace_id", "created_at"]

const layer = Layer.effect(
  HumanCaseRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const leaderboards = yield* LeaderboardRepository
    const servingHistory = yield* ServingHistory

    /** The leaderboard's workspace, in which its cases' ids are unique (and keyed). */
    const workspaceOf = (leaderboardId: LeaderboardId) => sql`(SELECT workspace_id FROM leaderboards WHERE id = ${leaderboardId})`

    const responseRows = (c: { readonly workspace_id: string; readonly id: string }) =>
      sql<ResponseRow>`SELECT ${sql.csv(responseColumns)} FROM human_responses
                       WHERE workspace_id = ${c.workspace_id} AND case_id = ${c.id}`

    const find = (leaderboardId: LeaderboardId, id: CaseId) =>
      Effect.gen(function*() {
        const [row] = yield* sql<CaseRow>`SELECT ${sql.literal(caseColumns)} FROM human_cases
                                          WHERE workspace_id = ${workspaceOf(leaderboardId)} AND id = ${id}
                                            AND leaderboard_id = ${leaderboardId}`
        if (row === undefined) return Option.none<HumanCase>()
        return Option.some(toCase(row, row.stage === "generated" ? yield* responseRows(row) : []))
      }).pipe(Effect.orDie)

    const insert = (c: HumanCase) =>
      sql.withTransaction(Effect.gen(function*() {
        const claimed = yield* sql`INSERT INTO human_client_ids (workspace_id, id, kind) VALUES (${c.workspace_id}, ${c.id}, 'case')
                                   ON CONFLICT (workspace_id, id) DO NOTHING RETURNING id`
        if (claimed.length === 0) {
          return { _tag: "Taken" as const, existing: yield* find(c.leaderboard_id, c.id) }
        }
        const s = stageColumns(c)
        yield* sql`
          INSERT INTO human_cases (id, leaderboard_id, workspace_id, input, context, prompt_override, prompt, attachments,
            configuration, creation_key, revision, stage, claim_id, claimed_at, slots, generated_at, review_state, review,
            revealed_at, created_at, updated_at)
          VALUES (${c.id}, ${c.leaderboard_id}, ${c.workspace_id}, ${c.input}, ${c.context}, ${c.prompt_override}, ${c.prompt},
            ${pg.json(AttachmentsJson.encode(c.attachments))}, ${c.configuration}, ${c.creation_key}, ${c.revision},
            ${s.stage}, ${s.claim_id}, ${s.claimed_at}, ${s.slots === null ? null : pg.json(s.slots)}, ${s.generated_at},
            ${s.review_state}, ${pg.json(s.review)}, ${s.revealed_at}, ${toDate(c.created_at)}, ${toDate(c.updated_at)})`
        yield* sql`INSERT INTO human_cohorts (leaderboard_id, configuration_hash, cases)
                   VALUES (${c.leaderboard_id}, md5(${c.configuration}), 1)
                   ON CONFLICT (leaderboard_id, configuration_hash) DO UPDATE SET cases = human_cohorts.cases + 1`
        return { _tag: "Inserted" as const }
      })).pipe(Effect.orDie)

    /** `update`'s statements, to run in a transaction. */
    const write = (next: HumanCase, history?: ReviewHistoryEntry) =>
      Effect.gen(function*() {
        const s = stageColumns(next)
        const contribution = contributionOf(next)
        // `FROM old` reads the row as it was before this update: what the case had added so far
        const updated = yield* sql<{ previous: unknown }>`
          UPDATE human_cases SET prompt_override = ${next.prompt_override}, prompt = ${next.prompt},
            revision = ${next.revision}, stage = ${s.stage}, claim_id = ${s.claim_id}, claimed_at = ${s.claimed_at},
            slots = ${s.slots === null ? null : pg.json(s.slots)}, generated_at = ${s.generated_at},
            review_state = ${s.review_state}, review = ${pg.json(s.review)}, revealed_at = ${s.revealed_at},
            updated_at = ${toDate(next.updated_at)},
            contribution = ${contribution === undefined ? null : pg.json(encodeTallies(contribution))}
          FROM (SELECT contribution AS previous FROM human_cases WHERE workspace_id = ${next.workspace_id} AND id = ${next.id}) old
          WHERE human_cases.workspace_id = ${next.workspace_id} AND human_cases.id = ${next.id}
            AND human_cases.revision = ${next.revision - 1}
          RETURNING old.previous`
        if (updated.length === 0) return false
        yield* moveTallies(next, decodeTallies(updated[0]!.previous), contribution)
        const review = next.stage._tag === "Generated" ? next.stage.review : undefined
        if (review !== undefined) {
          const verdicts = review._tag === "Unreviewed" ? {} : review.verdicts
          yield* sql`UPDATE human_responses SET verdict = (${pg.json(verdicts)}::jsonb ->> id::text)
                     WHERE workspace_id = ${next.workspace_id} AND case_id = ${next.id}`
        }
        if (history !== undefined) {
          yield* sql`INSERT INTO human_review_history (workspace_id, case_id, revision, confirmed, review, saved_by, saved_at)
                     VALUES (${next.workspace_id}, ${next.id}, ${history.revision}, ${history.confirmed},
                       ${pg.json(ReviewInputJson.encode(history.review))}, ${history.saved_by}, ${toDate(history.saved_at)})`
        }
        return true
      })

    const update = (next: HumanCase) => sql.withTransaction(write(next)).pipe(Effect.orDie)

    const saveReview = (next: HumanCase, history: ReviewHistoryEntry, cohort: RankingCohort, serving: HumanServingEntry) =>
      sql.withTransaction(Effect.gen(function*() {
        if (!(yield* write(next, history))) return false
        // one review at a time per leaderboard from here on, so each reads the tallies, verdicts and
        // ranking winner the last one left
        const [locked] = yield* sql<{ ranking_winner: string | null; serving_policy: unknown }>`
          SELECT ranking_winner_id::text AS ranking_winner, serving_policy FROM leaderboards
          WHERE id = ${next.leaderboard_id} FOR NO KEY UPDATE`
        if (locked === undefined) return true
        const [counted, cases] = yield* Effect.all([
          tallies(next.leaderboard_id, cohort.configuration, cohort.candidates.map((c) => c.id)),
          verdictCases(next.leaderboard_id, cohort.configuration)
        ])
        const policy = locked.serving_policy === null ? defaultServingPolicy : ServingPolicyJson.decode(locked.serving_policy)
        const { decision } = humanServing({
          candidates: cohort.candidates,
          ranking: fromTallies(cohort.candidates, counted),
          verdicts: commonVerdicts(cohort.candidates, cases),
          policy,
          serving: locked.ranking_winner
        })
        // only a change of what serves is written and recorded (see HumanCaseRepository.saveReview)
        if (!changesServing(decision)) return true
        yield* leaderboards.setRankingWinner(next.leaderboard_id, decision.to_candidate_id)
        yield* servingHistory.append(humanServingEntry({
          entry: serving,
          workspace_id: next.workspace_id,
          leaderboard_id: next.leaderboard_id,
          decision,
          policy,
          comparable: counted.comparable
        }))
        return true
      })).pipe(Effect.orDie)

    const verdictCases = (leaderboardId: LeaderboardId, configuration: string) =>
      sql<{ case_id: string; candidate_id: string; status: "succeeded" | "failed"; verdict: Verdict | null }>`
        SELECT r.case_id::text AS case_id, r.candidate_id::text AS candidate_id, r.status, r.verdict
        FROM human_responses r JOIN human_cases c ON c.workspace_id = r.workspace_id AND c.id = r.case_id
        WHERE c.leaderboard_id = ${leaderboardId} AND c.configuration_hash = md5(${configuration})
          AND c.review_state = 'confirmed'`.pipe(
        Effect.map((rows) =>
          [...Map.groupBy(rows, (r) => r.case_id)].map(([case_id, responses]): VerdictCase => ({
            case_id,
            responses: responses.map(({ candidate_id, status, verdict }) => ({ candidate_id, status, cost_usd: null, verdict }))
          }))
        ),
        Effect.orDie
      )

    /** Moves the configuration's counters from what the case added before to what it adds now. */
    const moveTallies = (c: HumanCase, before: Tallies | undefined, after: Tallies | undefined) =>
      Effect.gen(function*() {
        const delta = difference(after, before)
        if (delta.rows.length > 0) {
          yield* sql`
            INSERT INTO human_tallies (leaderboard_id, configuration_hash, candidate_id, common, correct, total, cost_sum,
              cost_samples, cost_missing, technical_errors)
            SELECT ${c.leaderboard_id}, md5(${c.configuration}), t.* FROM jsonb_to_recordset(${pg.json(delta.rows)})
              AS t(candidate_id uuid, common boolean, correct integer, total integer, cost_sum double precision,
                   cost_samples integer, cost_missing integer, technical_errors integer)
            ON CONFLICT (leaderboard_id, configuration_hash, candidate_id, common) DO UPDATE SET
              correct = human_tallies.correct + EXCLUDED.correct, total = human_tallies.total + EXCLUDED.total,
              cost_sum = round(human_tallies.cost_sum::numeric + EXCLUDED.cost_sum::numeric, 12)::float8,
              cost_samples = human_tallies.cost_samples + EXCLUDED.cost_samples,
              cost_missing = human_tallies.cost_missing + EXCLUDED.cost_missing,
              technical_errors = human_tallies.technical_errors + EXCLUDED.technical_errors`
        }
        if (delta.confirmed !== 0 || delta.comparable !== 0) {
          yield* sql`
            INSERT INTO human_cohorts (leaderboard_id, configuration_hash, confirmed, comparable)
            VALUES (${c.leaderboard_id}, md5(${c.configuration}), ${delta.confirmed}, ${delta.comparable})
            ON CONFLICT (leaderboard_id, configuration_hash) DO UPDATE SET
              confirmed = human_cohorts.confirmed + EXCLUDED.confirmed,
              comparable = human_cohorts.comparable + EXCLUDED.comparable`
        }
      })

    const saveResponse = (c: CaseKey, r: CaseResponse) =>
      sql`INSERT INTO human_responses (id, workspace_id, case_id, candidate_id, label, status, output, error, latency_ms, usage,
            cost_usd, trace_id, created_at)
          VALUES (${r.response_id}, ${c.workspace_id}, ${c.id}, ${r.candidate_id}, ${r.label}, ${r.status},
            ${r.output === null ? null : storableText(r.output)}, ${r.error === null ? null : storableText(r.error)},
            ${r.latency_ms}, ${r.usage === null ? null : pg.json(UsageJson.encode(r.usage))}, ${r.cost_usd}, ${r.trace_id},
            ${toDate(r.created_at)})
          ON CONFLICT DO NOTHING`.pipe(
        Effect.asVoid,
        Effect.catch((error) =>
          error.isRetryable ? Effect.die(error) : Effect.fail(new ResponseRefused({ reason: error.message }))
        )
      )

    const responses = (c: CaseKey) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ slots: unknown }>`SELECT slots FROM human_cases
                                                     WHERE workspace_id = ${c.workspace_id} AND id = ${c.id}`
        if (row === undefined || row.slots === null) return []
        return inSlotOrder(SlotsJson.decode(row.slots), yield* responseRows(c))
      }).pipe(Effect.orDie)

    const history = (c: CaseKey, limit: number) =>
      sql<{ revision: number; confirmed: boolean; review: unknown; saved_by: string | null; saved_at: Date }>`
        SELECT revision, confirmed, review, saved_by, saved_at FROM human_review_history
        WHERE workspace_id = ${c.workspace_id} AND case_id = ${c.id} ORDER BY revision DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((row): ReviewHistoryEntry => ({
            revision: row.revision,
            confirmed: row.confirmed,
            review: ReviewInputJson.decode(row.review),
            saved_by: row.saved_by as ReviewHistoryEntry["saved_by"],
            saved_at: utc(row.saved_at)
          }))
        ),
        Effect.orDie
      )

    const counts = (leaderboardId: LeaderboardId, configuration: string) =>
      sql<{
        total: number
        pending: number
        current_total: number
        current_pending: number
        next_pending_case: CaseId | null
      }>`
        SELECT COALESCE(sum(cases), 0)::int AS total, COALESCE(sum(cases - confirmed), 0)::int AS pending,
          COALESCE(sum(cases) FILTER (WHERE configuration_hash = md5(${configuration})), 0)::int AS current_total,
          COALESCE(sum(cases - confirmed) FILTER (WHERE configuration_hash = md5(${configuration})), 0)::int
            AS current_pending,
          (SELECT id::text FROM human_cases
           WHERE leaderboard_id = ${leaderboardId} AND configuration_hash = md5(${configuration})
             AND review_state <> 'confirmed'
           ORDER BY created_at, id LIMIT 1) AS next_pending_case
        FROM human_cohorts WHERE leaderboard_id = ${leaderboardId}`.pipe(
        Effect.map(([row]): CaseCounts => row!),
        Effect.orDie
      )

    const page = (leaderboardId: LeaderboardId, configuration: string, { limit, offset }: { offset: number; limit: number }) =>
      sql<{
        case_id: CaseId
        stage: CaseListItem["status"]
        review_state: CaseListItem["review_state"]
        revision: number
        input: string
        current: boolean
        created_at: Date
        updated_at: Date
      }>`
        SELECT id::text AS case_id, stage, review_state, revision, left(input, 200) AS input,
          configuration_hash = md5(${configuration}) AS current, created_at, updated_at
        FROM human_cases
        WHERE workspace_id = ${workspaceOf(leaderboardId)} AND id IN (
          -- the page's ids from the index alone: a deep offset then skips index entries, not rows
          SELECT id FROM human_cases WHERE leaderboard_id = ${leaderboardId}
          ORDER BY created_at, id OFFSET ${offset} LIMIT ${limit}
        )
        ORDER BY created_at, id`.pipe(
        Effect.map((rows) =>
          rows.map((row): CaseListItem => ({
            id: row.case_id,
            status: row.stage,
            review_state: row.review_state,
            revision: row.revision,
            input: row.input,
            current: row.current,
            created_at: utc(row.created_at),
            updated_at: utc(row.updated_at)
          }))
        ),
        Effect.orDie
      )

    const tallies = (leaderboardId: LeaderboardId, configuration: string, candidateIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const [rows, cohorts] = yield* Effect.all([
          sql<TallyRow>`
            SELECT candidate_id::text AS candidate_id, common, correct, total, cost_sum, cost_samples, cost_missing,
              technical_errors
            FROM human_tallies
            WHERE leaderboard_id = ${leaderboardId} AND configuration_hash = md5(${configuration})
              AND candidate_id = ANY(${[...candidateIds]}::uuid[])`,
          sql<{ confirmed: number; comparable: number }>`
            SELECT confirmed, comparable FROM human_cohorts
            WHERE leaderboard_id = ${leaderboardId} AND configuration_hash = md5(${configuration})`
        ])
        const pick = (common: boolean) =>
          new Map(rows.filter((row) => row.common === common).map(({ candidate_id, common: _, ...tally }) => [candidate_id, tally]))
        return {
          rows: pick(false),
          common: pick(true),
          confirmed: cohorts[0]?.confirmed ?? 0,
          comparable: cohorts[0]?.comparable ?? 0
        } satisfies Tallies
      }).pipe(Effect.orDie)

    const confirmed = (leaderboardId: LeaderboardId) =>
      Effect.gen(function*() {
        const rows = yield* sql<CaseRow>`SELECT ${sql.literal(caseColumns)} FROM human_cases
                                         WHERE leaderboard_id = ${leaderboardId} AND review_state = 'confirmed'
                                         ORDER BY created_at, id`
        const answers = yield* sql<ResponseRow & { case_id: string }>`
          SELECT r.case_id::text AS case_id, ${sql.csv(responseColumns.map((c) => sql`r.${sql(c)}`))}
          FROM human_responses r JOIN human_cases c ON c.workspace_id = r.workspace_id AND c.id = r.case_id
          WHERE c.leaderboard_id = ${leaderboardId} AND c.review_state = 'confirmed'`
        const byCase = Map.groupBy(answers, (r) => r.case_id)
        return rows.map((row) => toCase(row, byCase.get(row.id) ?? []))
      }).pipe(Effect.orDie)

    return HumanCaseRepository.of({
      insert, find, update, saveReview, saveResponse, responses, counts, page, tallies, verdictCases, confirmed, history
    })
  })
)

export const HumanCaseRepositoryPg = { layer }
