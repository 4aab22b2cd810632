import { Data, DateTime, Effect, Layer, Option, Ref } from "effect"
import type { Candidate } from "./Candidate.ts"
import { Leaderboard } from "./Leaderboard.ts"
import { LeaderboardRepository, type Serving } from "./LeaderboardRepository.ts"

interface StoredLeaderboard {
  readonly leaderboard: Leaderboard
  readonly deleted: boolean
  readonly ranking_winner: string | null
}

interface StoredCandidate {
  readonly candidate: Candidate
  readonly sealedToken: string | null
}

interface Tables {
  readonly leaderboards: ReadonlyMap<string, StoredLeaderboard>
  readonly candidates: ReadonlyMap<string, StoredCandidate>
}

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

const byId = (a: { readonly id: string }, b: { readonly id: string }) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const liveOf = (tables: Tables, id: string) => {
  const stored = tables.leaderboards.get(id)
  return stored === undefined || stored.deleted ? undefined : stored
}

const candidatesOf = (tables: Tables, leaderboardId: string) =>
  [...tables.candidates.values()].filter((c) => c.candidate.leaderboard_id === leaderboardId)
    .sort((a, b) => byId(a.candidate, b.candidate))

/** The foreign key of the choice: a candidate of the same leaderboard, or none. */
const choiceHolds = (tables: Tables, l: Leaderboard) =>
  l.chosen_leaderboard_model_id === null ||
  tables.candidates.get(l.chosen_leaderboard_model_id)?.candidate.leaderboard_id === l.id

const withLeaderboard = (tables: Tables, stored: StoredLeaderboard): Tables => ({
  ...tables,
  leaderboards: new Map(tables.leaderboards).set(stored.leaderboard.id, stored)
})

/** The Postgres adapter's semantics over in-process maps, version check included: for tests. */
const layer = Layer.effect(
  LeaderboardRepository,
  Effect.gen(function*() {
    const ref = yield* Ref.make<Tables>({ leaderboards: new Map(), candidates: new Map() })

    // Each operation yields first, as a round trip to the database would, so that concurrent use
    // cases interleave (and lose races) here as they do against Postgres.
    const read = <A>(f: (tables: Tables) => A) => Effect.andThen(Effect.yieldNow, Effect.map(Ref.get(ref), f))
    /** Applies `f` atomically; a `ConstraintViolated` leaves the tables as they were and dies. */
    const write = <A>(f: (tables: Tables) => readonly [A, Tables] | ConstraintViolated) =>
      Effect.andThen(
        Effect.yieldNow,
        Ref.modify(ref, (tables): readonly [A | ConstraintViolated, Tables] => {
          const out = f(tables)
          return out instanceof ConstraintViolated ? [out, tables] : out
        })
      ).pipe(Effect.flatMap((a) => a instanceof ConstraintViolated ? Effect.die(a) : Effect.succeed(a)))

    const serving = (id: string) =>
      read((tables) => {
        const stored = liveOf(tables, id)
        if (stored === undefined) return Option.none()
        const candidates = candidatesOf(tables, id)
        return Option.some<Serving>({
          leaderboard: stored.leaderboard,
          candidates: candidates.map((c) => c.candidate),
          credentials: new Map(candidates.flatMap((c) => c.sealedToken === null ? [] : [[c.candidate.id, c.sealedToken]])),
          ranking_winner: stored.ranking_winner
        })
      })

    return LeaderboardRepository.of({
      insert: (leaderboard) =>
        write((tables) =>
          tables.leaderboards.has(leaderboard.id)
            ? new ConstraintViolated({ constraint: "leaderboards_pkey" })
            : !choiceHolds(tables, leaderboard)
            ? new ConstraintViolated({ constraint: "leaderboards_chosen_fkey" })
            : [undefined, withLeaderboard(tables, { leaderboard, deleted: false, ranking_winner: null })]
        ),
      list: (workspaceId, page) =>
        read((tables) =>
          [...tables.leaderboards.values()]
            .filter((s) => !s.deleted && s.leaderboard.workspace_id === workspaceId)
            .map((s) => s.leaderboard)
            .sort((a, b) => byId(b, a))
            .slice(page.offset, page.offset + page.limit)
        ),
      find: (id) => read((tables) => Option.fromUndefinedOr(liveOf(tables, id)?.leaderboard)),
      findServing: serving,
      servingSnapshot: serving,
      update: (next) =>
        write((tables) => {
          const stored = liveOf(tables, next.id)
          if (stored === undefined || stored.leaderboard.version !== next.version - 1) return [false, tables]
          const leaderboard = new Leaderboard({
            ...next,
            workspace_id: stored.leaderboard.workspace_id,
            created_at: stored.leaderboard.created_at
          })
          return choiceHolds(tables, leaderboard)
            ? [true, withLeaderboard(tables, { ...stored, leaderboard })]
            : new ConstraintViolated({ constraint: "leaderboards_chosen_fkey" })
        }),
      setRankingWinner: (id, candidateId) =>
        write((tables) => {
          const stored = tables.leaderboards.get(id)
          return [undefined, stored === undefined ? tables : withLeaderboard(tables, { ...stored, ranking_winner: candidateId })]
        }),
      dueSchedules: (now) =>
        read((tables) =>
          [...tables.leaderboards.values()]
            .filter((s) => !s.deleted)
            .map((s) => s.leaderboard)
            .filter((l) => {
              const next = typeof l.schedule["next_run_at"] === "string" ? DateTime.make(l.schedule["next_run_at"]) : Option.none()
              return Option.isSome(next) && !DateTime.isGreaterThan(next.value, now)
            })
        ),
      advanceSchedule: (id, from, next) =>
        write((tables) => {
          const stored = liveOf(tables, id)
          if (stored === undefined || stored.leaderboard.schedule["next_run_at"] !== from) return [false, tables]
          const leaderboard = new Leaderboard({
            ...stored.leaderboard,
            schedule: { ...stored.leaderboard.schedule, next_run_at: next },
            version: stored.leaderboard.version + 1
          })
          return [true, withLeaderboard(tables, { ...stored, leaderboard })]
        }),
      softDelete: (id) =>
        write((tables) => {
          const stored = liveOf(tables, id)
          return stored === undefined ? [false, tables] : [true, withLeaderboard(tables, { ...stored, deleted: true })]
        }),
      candidates: (id) => read((tables) => candidatesOf(tables, id).map((c) => c.candidate)),
      insertCandidates: (rows) =>
        write((tables) => {
          const candidates = new Map(tables.candidates)
          for (const { candidate, sealedToken } of rows) {
            if (candidates.has(candidate.id)) return new ConstraintViolated({ constraint: "leaderboard_models_pkey" })
            if (!tables.leaderboards.has(candidate.leaderboard_id)) {
              return new ConstraintViolated({ constraint: "leaderboard_models_leaderboard_id_fkey" })
            }
            candidates.set(candidate.id, { candidate, sealedToken })
          }
          return [undefined, { ...tables, candidates }]
        }),
      removeCandidate: (leaderboardId, id) =>
        write((tables) => {
          const stored = tables.leaderboards.get(leaderboardId)
          if (stored === undefined || tables.candidates.get(id)?.candidate.leaderboard_id !== leaderboardId) {
            return [false, tables]
          }
          const candidates = new Map(tables.candidates)
          candidates.delete(id)
          const wasChosen = stored.leaderboard.chosen_leaderboard_model_id === id
          const leaderboard = new Leaderboard({
            ...stored.leaderboard,
            chosen_leaderboard_model_id: wasChosen ? null : stored.leaderboard.chosen_leaderboard_model_id,
            chosen_model_strategy: wasChosen ? "ranking_winner" : stored.leaderboard.chosen_model_strategy,
            version: stored.leaderboard.version + 1
          })
          return [true, withLeaderboard({ ...tables, candidates }, { ...stored, leaderboard })]
        })
    })
  })
)

export const LeaderboardRepositoryMemory = { layer }
