import { Context, DateTime, Effect, Layer, Option, Redacted } from "effect"
import { type Forbidden, type Principal, visibleMembership, workspaceOf } from "../access/index.ts"
import { type AuthType, Candidate, checkCandidate, endpointOf, type Platform } from "./Candidate.ts"
import { InvalidInput, NotFound, type WorkspaceId, IdGenerator, SecretCipher, hotSpan } from "../shared/index.ts"
import {
  applyUpdate,
  CandidateId,
  type ChallengeInput,
  challengeOf,
  checkDataset,
  checkUpdate,
  Leaderboard,
  type LeaderboardArchived,
  LeaderboardId,
  type UpdateInput
} from "./Leaderboard.ts"
import { LeaderboardRepository, type Serving } from "./LeaderboardRepository.ts"
import { ModelDirectory } from "./ModelDirectory.ts"
import {
  actorOf,
  changedServing,
  NoPreviousServing,
  ServingEntryId,
  ServingHistory,
  ServingHistoryEntry,
  type ServingHistoryPage,
  servingCandidateId
} from "./ServingHistory.ts"

export interface CreateInput extends ChallengeInput {
  readonly name: string
  readonly description?: string | undefined
  readonly business_id?: WorkspaceId | undefined
}

export interface CandidateInput {
  readonly name: string
  readonly platform?: Platform | undefined
  readonly model_name?: string | undefined
  readonly model_url?: string | undefined
  readonly url?: string | undefined
  readonly model_id?: string | undefined
  readonly token?: string | undefined
  readonly auth_type?: AuthType | undefined
  readonly auth_header_name?: string | undefined
  readonly input_price_per_m_tokens?: number | undefined
  readonly output_price_per_m_tokens?: number | undefined
}

/** A rollback's outcome: the leaderboard, the candidate it serves now, and the entry that records it. */
export interface Rollback {
  readonly leaderboard: Leaderboard
  readonly serving: CandidateId
  readonly entry: ServingHistoryEntry
}

export interface LeaderboardDetail {
  readonly leaderboard: Leaderboard
  readonly candidates: ReadonlyArray<Candidate>
}

/**
 * How often an update is recomputed after losing the race to another write. Each loss means some
 * other write landed, so only sustained contention from this many writers exhausts it.
 */
const updateAttempts = 50

/** Leaderboards and candidates of the caller's workspace; another workspace's do not exist for them. */
export class Leaderboards extends Context.Service<Leaderboards, {
  readonly list: (
    principal: Principal,
    page: { readonly limit: number; readonly offset: number; readonly business_id?: WorkspaceId | undefined }
  ) => Effect.Effect<ReadonlyArray<Leaderboard>, Forbidden>
  readonly create: (principal: Principal, input: CreateInput) => Effect.Effect<Leaderboard, Forbidden | InvalidInput>
  readonly get: (principal: Principal, id: LeaderboardId) => Effect.Effect<LeaderboardDetail, NotFound>
  /**
   * As `get`, with the candidates' sealed credentials: what serving a call needs, in one read,
   * possibly from this instance's copy (`LeaderboardRepository.servingSnapshot`).
   */
  readonly serving: (principal: Principal, id: LeaderboardId) => Effect.Effect<Serving, NotFound>
  /** A change of the chosen strategy or candidate is recorded in the serving history (`manual`). */
  readonly update: (
    principal: Principal,
    id: LeaderboardId,
    input: UpdateInput
  ) => Effect.Effect<Leaderboard, NotFound | InvalidInput | LeaderboardArchived>
  /** The leaderboard's serving history, newest first (ServingHistory.list). */
  readonly servingHistory: (
    principal: Principal,
    id: LeaderboardId,
    page: { readonly limit: number; readonly cursor?: ServingEntryId | undefined }
  ) => Effect.Effect<ServingHistoryPage, NotFound>
  /**
   * Serves again the candidate that served before the newest change of what serves (`from` of the
   * newest entry whose from and to differ): under `manual` as the chosen candidate, otherwise as the
   * ranking's winner. Recorded as a `rollback` entry. NoPreviousServing if no entry changed what
   * serves or that candidate was removed.
   */
  readonly rollback: (
    principal: Principal,
    id: LeaderboardId
  ) => Effect.Effect<Rollback, NotFound | InvalidInput | LeaderboardArchived | NoPreviousServing>
  readonly remove: (principal: Principal, id: LeaderboardId) => Effect.Effect<void, NotFound>
  /** A Service candidate's `model_id` must name a model of the leaderboard's workspace (ModelDirectory). */
  readonly addCandidate: (
    principal: Principal,
    id: LeaderboardId,
    input: CandidateInput
  ) => Effect.Effect<Candidate, NotFound | InvalidInput | LeaderboardArchived>
  /** As `addCandidate` for each input, stored all together or (any refused or failing) none. */
  readonly addCandidates: (
    principal: Principal,
    id: LeaderboardId,
    inputs: ReadonlyArray<CandidateInput>
  ) => Effect.Effect<ReadonlyArray<Candidate>, NotFound | InvalidInput | LeaderboardArchived>
  readonly removeCandidate: (
    principal: Principal,
    id: LeaderboardId,
    candidateId: CandidateId
  ) => Effect.Effect<void, NotFound | InvalidInput | LeaderboardArchived>
}>()("@podium/domain/leaderboards/Leaderboards") {
  static readonly layer = Layer.effect(
    Leaderboards,
    Effect.gen(function*() {
      const repository = yield* LeaderboardRepository
      const ids = yield* IdGenerator
      const cipher = yield* SecretCipher
      const models = yield* ModelDirectory
      const history = yield* ServingHistory

      /** The leaderboard with its candidates, if the caller's workspace owns it. */
      const visibleServing = Effect.fnUntraced(function*(
        principal: Principal,
        id: LeaderboardId,
        read: (id: LeaderboardId) => Effect.Effect<Option.Option<Serving>> = repository.findServing
      ) {
        const found = yield* read(id)
        const owner = Option.map(found, (s) => s.leaderboard.workspace_id)
        const sees = Option.isSome(owner) && (
          principal._tag === "ApiTokenPrincipal"
            ? principal.token.workspace_id === owner.value
            : principal._tag === "PushTokenPrincipal"
            ? principal.workspaceId === owner.value
            : visibleMembership(principal, owner.value) !== undefined
        )
        if (!sees || Option.isNone(found)) return yield* new NotFound({ resource: "leaderboard", id })
        return found.value
      })

      const visible = (principal: Principal, id: LeaderboardId) =>
        Effect.map(visibleServing(principal, id), (s) => s.leaderboard)

      const writable = Effect.fnUntraced(function*(principal: Principal, id: LeaderboardId) {
        const leaderboard = yield* visible(principal, id)
        yield* Effect.fromResult(checkUpdate(leaderboard, { changesOtherFields: true }))
        return leaderboard
      })

      const list = Effect.fn("Leaderboards.list")(function*(
        principal: Principal,
        page: { readonly limit: number; readonly offset: number; readonly business_id?: WorkspaceId | undefined }
      ) {
        const workspaceId = yield* workspaceOf(principal, page.business_id)
        return yield* repository.list(workspaceId, page)
      })

      const create = Effect.fn("Leaderboards.create")(function*(principal: Principal, input: CreateInput) {
        const workspaceId = yield* workspaceOf(principal, input.business_id)
        const challenge = challengeOf(input)
        yield* Effect.fromResult(checkDataset(challenge))
        const now = yield* DateTime.now
        const leaderboard = new Leaderboard({
          id: yield* ids.make(LeaderboardId),
          workspace_id: workspaceId,
          name: input.name,
          description: input.description ?? "",
          status: "active",
          chosen_model_strategy: "ranking_winner",
          chosen_leaderboard_model_id: null,
          schedule: {},
          challenge,
          extra: {},
          created_at: now,
          updated_at: now,
          version: 1
        })
        yield* repository.insert(leaderboard)
        return leaderboard
      })

      const get = Effect.fn("Leaderboards.get")(function*(principal: Principal, id: LeaderboardId) {
        const { candidates, leaderboard } = yield* visibleServing(principal, id)
        return { leaderboard, candidates }
      })

      const serving = (principal: Principal, id: LeaderboardId) =>
        visibleServing(principal, id, repository.servingSnapshot).pipe(hotSpan("Leaderboards.serving"))

      const update = Effect.fn("Leaderboards.update")(function*(
        principal: Principal,
        id: LeaderboardId,
        input: UpdateInput
      ) {
        for (let attempt = 1; attempt <= updateAttempts; attempt++) {
          const current = yield* visibleServing(principal, id)
          const next = yield* Effect.fromResult(applyUpdate(current, input, yield* DateTime.now))
          if (!(yield* repository.update(next))) continue
          const before = current.leaderboard
          if (
            next.chosen_model_strategy !== before.chosen_model_strategy ||
            next.chosen_leaderboard_model_id !== before.chosen_leaderboard_model_id
          ) {
            yield* history.append(new ServingHistoryEntry({
              id: yield* ids.make(ServingEntryId),
              workspace_id: next.workspace_id,
              leaderboard_id: next.id,
              at: next.updated_at,
              kind: "manual",
              from_candidate_id: servingCandidateId(before, current.candidates, current.ranking_winner),
              to_candidate_id: servingCandidateId(next, current.candidates, current.ranking_winner),
              actor: actorOf(principal),
              evidence: {
                chosen_model_strategy: { from: before.chosen_model_strategy, to: next.chosen_model_strategy },
                chosen_leaderboard_model_id: {
                  from: before.chosen_leaderboard_model_id,
                  to: next.chosen_leaderboard_model_id
                }
              },
              reason: null
            }))
          }
          return next
        }
        return yield* Effect.die(new Error(`leaderboard ${id}: every update lost to a concurrent write`))
      })

      const servingHistory = Effect.fn("Leaderboards.servingHistory")(function*(
        principal: Principal,
        id: LeaderboardId,
        page: { readonly limit: number; readonly cursor?: ServingEntryId | undefined }
      ) {
        yield* visible(principal, id)
        return yield* history.list(id, page)
      })

      /** The newest entry that changed what serves, reading back a page at a time. */
      const lastChange = Effect.fnUntraced(function*(id: LeaderboardId) {
        let cursor: ServingEntryId | undefined = undefined
        while (true) {
          const page: ServingHistoryPage = yield* history.list(id, { limit: 100, cursor })
          const found = page.entries.find(changedServing)
          if (found !== undefined) return Option.some(found)
          if (page.next_cursor === null) return Option.none<ServingHistoryEntry>()
          cursor = page.next_cursor
        }
      })

      const rollback = Effect.fn("Leaderboards.rollback")(function*(principal: Principal, id: LeaderboardId) {
        yield* writable(principal, id)
        const change = yield* lastChange(id)
        const target = Option.flatMapNullishOr(change, (entry) => entry.from_candidate_id)
        if (Option.isNone(change) || Option.isNone(target)) {
          return yield* new NoPreviousServing({
            leaderboard_id: id,
            message: "No earlier serving candidate to return to: nothing has changed what this leaderboard serves"
          })
        }
        for (let attempt = 1; attempt <= updateAttempts; attempt++) {
          const current = yield* visibleServing(principal, id)
          if (!current.candidates.some((c) => c.id === target.value)) {
            return yield* new NoPreviousServing({
              leaderboard_id: id,
              message: `The candidate served before, ${target.value}, is no longer a candidate of this leaderboard`
            })
          }
          const now = yield* DateTime.now
          const from = servingCandidateId(current.leaderboard, current.candidates, current.ranking_winner)
          let leaderboard = current.leaderboard
          if (leaderboard.chosen_model_strategy === "manual") {
            leaderboard = new Leaderboard({
              ...leaderboard,
              chosen_leaderboard_model_id: target.value,
              updated_at: now,
              version: leaderboard.version + 1
            })
            if (!(yield* repository.update(leaderboard))) continue
          } else {
            yield* repository.setRankingWinner(id, target.value)
          }
          const entry = new ServingHistoryEntry({
            id: yield* ids.make(ServingEntryId),
            workspace_id: leaderboard.workspace_id,
            leaderboard_id: id,
            at: now,
            kind: "rollback",
            from_candidate_id: from,
            to_candidate_id: target.value,
            actor: actorOf(principal),
            evidence: { undoes: change.value.id, strategy: leaderboard.chosen_model_strategy },
            reason: null
          })
          yield* history.append(entry)
          return { leaderboard, serving: target.value, entry }
        }
        return yield* Effect.die(new Error(`leaderboard ${id}: every rollback lost to a concurrent write`))
      })

      const remove = Effect.fn("Leaderboards.remove")(function*(principal: Principal, id: LeaderboardId) {
        yield* visible(principal, id)
        if (!(yield* repository.softDelete(id, yield* DateTime.now))) {
          return yield* new NotFound({ resource: "leaderboard", id })
        }
      })

      /** A checked candidate with its sealed credential, not stored yet. */
      const candidateOf = Effect.fnUntraced(function*(leaderboard: Leaderboard, input: CandidateInput) {
        const endpoint = yield* Effect.fromResult(endpointOf(input))
        const fields = {
          platform: input.platform ?? "Router",
          model_name: input.model_name ?? null,
          url: endpoint.url,
          model_id: input.model_id ?? null,
          auth_type: input.auth_type ?? "bearer",
          auth_header_name: input.auth_header_name ?? null
        }
        yield* Effect.fromResult(checkCandidate({ ...fields, endpoint_field: endpoint.field }))
        if (fields.model_id !== null && fields.platform === "Service" && !(yield* models.exists(leaderboard.workspace_id, fields.model_id))) {
          return yield* new InvalidInput({ message: "model_id names no model of the leaderboard's workspace", path: ["model_id"] })
        }
        const candidate = new Candidate({
          ...fields,
          id: yield* ids.make(CandidateId),
          leaderboard_id: leaderboard.id,
          name: input.name,
          model_url: endpoint.url,
          has_token: input.token !== undefined,
          input_price_per_m_tokens: input.input_price_per_m_tokens ?? null,
          output_price_per_m_tokens: input.output_price_per_m_tokens ?? null,
          created_at: yield* DateTime.now
        })
        const sealedToken = input.token === undefined ? null : yield* cipher.seal(Redacted.make(input.token))
        return { candidate, sealedToken }
      })

      const addCandidates = Effect.fn("Leaderboards.addCandidates")(function*(
        principal: Principal,
        id: LeaderboardId,
        inputs: ReadonlyArray<CandidateInput>
      ) {
        const leaderboard = yield* writable(principal, id)
        const rows = yield* Effect.forEach(inputs, (input) => candidateOf(leaderboard, input))
        yield* repository.insertCandidates(rows)
        return rows.map((row) => row.candidate)
      })

      const addCandidate = Effect.fn("Leaderboards.addCandidate")(function*(
        principal: Principal,
        id: LeaderboardId,
        input: CandidateInput
      ) {
        const [candidate] = yield* addCandidates(principal, id, [input])
        return candidate!
      })

      const removeCandidate = Effect.fn("Leaderboards.removeCandidate")(function*(
        principal: Principal,
        id: LeaderboardId,
        candidateId: CandidateId
      ) {
        yield* writable(principal, id)
        if (!(yield* repository.removeCandidate(id, candidateId))) {
          return yield* new NotFound({ resource: "candidate", id: candidateId })
        }
      })

      return Leaderboards.of({
        list,
        create,
        get,
        serving,
        update,
        servingHistory,
        rollback,
        remove,
        addCandidate,
        addCandidates,
        removeCandidate
      })
    })
  )
}
