import { Context, DateTime, Effect, Layer, Option, Redacted } from "effect"
import { type Forbidden, type Principal, visibleMembership, workspaceOf } from "../access/index.ts"
import { type AuthType, Candidate, checkCandidate, type Platform } from "./Candidate.ts"
import { type InvalidInput, NotFound, type WorkspaceId, IdGenerator, SecretCipher } from "../shared/index.ts"
import {
  type CandidateId,
  type Challenge,
  checkChoice,
  checkDataset,
  checkUpdate,
  Leaderboard,
  type LeaderboardArchived,
  type LeaderboardId
} from "./Leaderboard.ts"
import { LeaderboardRepository, type Serving } from "./LeaderboardRepository.ts"

export type ChallengeInput = Partial<{ -readonly [K in keyof Challenge]: Challenge[K] | undefined }>

export interface CreateInput extends ChallengeInput {
  readonly name: string
  readonly description?: string | undefined
  readonly business_id?: WorkspaceId | undefined
}

export interface UpdateInput extends ChallengeInput {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly status?: "active" | "paused" | "archived" | "running" | undefined
  readonly chosen_model_strategy?: "ranking_winner" | "manual" | undefined
  readonly chosen_leaderboard_model_id?: CandidateId | null | undefined
  readonly schedule?: Readonly<Record<string, unknown>> | undefined
  /** Unknown properties of the (open) update request: stored and returned. */
  readonly extra: Readonly<Record<string, unknown>>
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

export interface LeaderboardDetail {
  readonly leaderboard: Leaderboard
  readonly candidates: ReadonlyArray<Candidate>
}

const challengeOf = (input: ChallengeInput, base?: Challenge): Challenge => {
  const pick = <K extends keyof Challenge>(key: K, fallback: Challenge[K]): Challenge[K] =>
    input[key] !== undefined ? input[key] as Challenge[K] : base !== undefined ? base[key] : fallback
  return {
    system_prompt: pick("system_prompt", null),
    model_prompt: pick("model_prompt", null),
    eval_type: pick("eval_type", "exact"),
    judge_provider: pick("judge_provider", null),
    judge_model: pick("judge_model", null),
    dataset_type: pick("dataset_type", "GET"),
    dataset_url: pick("dataset_url", null),
    auto_limit_size: pick("auto_limit_size", false),
    max_samples_to_gather: pick("max_samples_to_gather", null),
    daily_event_limit: pick("daily_event_limit", null),
    monthly_event_limit: pick("monthly_event_limit", null),
    consolidate_every_events: pick("consolidate_every_events", null),
    consolidate_every_hours: pick("consolidate_every_hours", null),
    dedupe: pick("dedupe", false),
    end_date: pick("end_date", null)
  }
}

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
  readonly update: (
    principal: Principal,
    id: LeaderboardId,
    input: UpdateInput
  ) => Effect.Effect<Leaderboard, NotFound | InvalidInput | LeaderboardArchived>
  readonly remove: (principal: Principal, id: LeaderboardId) => Effect.Effect<void, NotFound>
  readonly addCandidate: (
    principal: Principal,
    id: LeaderboardId,
    input: CandidateInput
  ) => Effect.Effect<Candidate, NotFound | InvalidInput | LeaderboardArchived>
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
          id: (yield* ids.next) as LeaderboardId,
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
          updated_at: now
        })
        yield* repository.insert(leaderboard)
        return leaderboard
      })

      const get = Effect.fn("Leaderboards.get")(function*(principal: Principal, id: LeaderboardId) {
        const { candidates, leaderboard } = yield* visibleServing(principal, id)
        return { leaderboard, candidates }
      })

      const serving = Effect.fn("Leaderboards.serving")((principal: Principal, id: LeaderboardId) =>
        visibleServing(principal, id, repository.servingSnapshot)
      )

      const update = Effect.fn("Leaderboards.update")(function*(
        principal: Principal,
        id: LeaderboardId,
        input: UpdateInput
      ) {
        const current = yield* visible(principal, id)
        const { extra, name, description, status, chosen_model_strategy, chosen_leaderboard_model_id, schedule } = input
        const changesOtherFields = Object.entries(input).some(([key, value]) =>
          key !== "status" && value !== undefined && !(key === "extra" && Object.keys(extra).length === 0)
        )
        yield* Effect.fromResult(checkUpdate(current, { status, changesOtherFields }))
        const challenge = challengeOf(input, current.challenge)
        yield* Effect.fromResult(checkDataset(challenge))
        const next = new Leaderboard({
          ...current,
          name: name ?? current.name,
          description: description ?? current.description,
          status: status === undefined || status === "running" ? current.status : status,
          chosen_model_strategy: chosen_model_strategy ?? current.chosen_model_strategy,
          chosen_leaderboard_model_id: chosen_leaderboard_model_id === undefined
            ? current.chosen_leaderboard_model_id
            : chosen_leaderboard_model_id,
          schedule: schedule ?? current.schedule,
          challenge,
          extra: { ...current.extra, ...extra },
          updated_at: yield* DateTime.now
        })
        const candidates = yield* repository.candidates(id)
        yield* Effect.fromResult(checkChoice(next, candidates.map((c) => c.id)))
        yield* repository.update(next)
        return next
      })

      const remove = Effect.fn("Leaderboards.remove")(function*(principal: Principal, id: LeaderboardId) {
        yield* visible(principal, id)
        if (!(yield* repository.softDelete(id, yield* DateTime.now))) {
          return yield* new NotFound({ resource: "leaderboard", id })
        }
      })

      const addCandidate = Effect.fn("Leaderboards.addCandidate")(function*(
        principal: Principal,
        id: LeaderboardId,
        input: CandidateInput
      ) {
        yield* writable(principal, id)
        const fields = {
          platform: input.platform ?? "Router",
          model_name: input.model_name ?? null,
          url: input.url ?? null,
          model_id: input.model_id ?? null,
          auth_type: input.auth_type ?? "bearer",
          auth_header_name: input.auth_header_name ?? null
        }
        yield* Effect.fromResult(checkCandidate(fields))
        const candidate = new Candidate({
          ...fields,
          id: (yield* ids.next) as CandidateId,
          leaderboard_id: id,
          name: input.name,
          model_url: input.model_url ?? null,
          has_token: input.token !== undefined,
          input_price_per_m_tokens: input.input_price_per_m_tokens ?? null,
          output_price_per_m_tokens: input.output_price_per_m_tokens ?? null,
          created_at: yield* DateTime.now
        })
        const sealed = input.token === undefined ? null : yield* cipher.seal(Redacted.make(input.token))
        yield* repository.insertCandidate(candidate, sealed)
        return candidate
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

      return Leaderboards.of({ list, create, get, serving, update, remove, addCandidate, removeCandidate })
    })
  )
}
