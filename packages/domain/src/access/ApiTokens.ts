import { type BigDecimal, Context, DateTime, Effect, Layer, Option, type Redacted, Result } from "effect"
import { amend as amendToken, type ApiToken, ApiTokenPrefix, issue, type TokenChange, type TokenRequest } from "./ApiToken.ts"
import { windowOf } from "./Budget.ts"
import type { Forbidden } from "./AuthErrors.ts"
import { IdGenerator, InvalidInput, NotFound, TokenId, type UserId, type WorkspaceId } from "../shared/index.ts"
import type { Principal } from "./Principal.ts"
import { ApiTokenRepository } from "./ApiTokenRepository.ts"
import { TokenSecrets } from "./TokenSecrets.ts"
import { requireAdministrator } from "./Workspace.ts"
import { WorkspaceRepository } from "./WorkspaceRepository.ts"
import { administratorOf, visibleMembership } from "./Access.ts"

export interface CreateTokenInput extends TokenRequest {
  readonly business_id?: WorkspaceId | undefined
}

/**
 * Who made a token, for the owners deciding what to revoke. A token belongs to its workspace, not
 * to its creator: it keeps working after they leave the workspace (`member` false then).
 */
export interface TokenCreator {
  /** As the creator last signed in; null when their session had none. */
  readonly email: string | null
  /** Whether the creator still belongs to the token's workspace. */
  readonly member: boolean
}

/** What a budgeted token has used of its current budget period, in exact decimal USD. */
export interface TokenSpend {
  readonly settled: BigDecimal.BigDecimal
  readonly reserved: BigDecimal.BigDecimal
  /** When the period began: the UTC day, week (from Monday) or month containing now; null without a reset. */
  readonly period_start: DateTime.Utc | null
  /** When the spend next resets; null without a reset interval. */
  readonly resets_at: DateTime.Utc | null
}

/** A token with its creator; null for one made on the command line. */
export interface DescribedToken {
  readonly token: ApiToken
  readonly creator: TokenCreator | null
  /** The current period's spend; null for a token without a budget. */
  readonly spend: TokenSpend | null
}

export interface CreatedToken extends DescribedToken {
  /** Shown once; only its digest is stored. */
  readonly secret: Redacted.Redacted<string>
}

/** Budget settings must come as a pair: a limit without a reset interval never resets, which is allowed. */
export const checkBudget = (input: TokenRequest): Result.Result<void, InvalidInput> =>
  input.budget_reset_interval != null && input.budget_limit == null
    ? Result.fail(new InvalidInput({
      message: "budget_reset_interval needs a budget_limit",
      path: ["budget_reset_interval"]
    }))
    : Result.void

/** API token management for owners and admins of a workspace (session only). */
export class ApiTokens extends Context.Service<ApiTokens, {
  readonly list: (
    principal: Principal,
    businessId: WorkspaceId | undefined
  ) => Effect.Effect<{ readonly workspaceId: WorkspaceId; readonly tokens: ReadonlyArray<DescribedToken> }, Forbidden>
  readonly create: (principal: Principal, input: CreateTokenInput) => Effect.Effect<CreatedToken, Forbidden | InvalidInput>
  readonly revoke: (principal: Principal, id: TokenId) => Effect.Effect<DescribedToken, Forbidden | NotFound>
  readonly remove: (principal: Principal, id: TokenId) => Effect.Effect<void, Forbidden | NotFound>
  /** Changes a token's name, expiry or budget (never its scopes); see `amend` for the budget's spend. */
  readonly amend: (
    principal: Principal,
    id: TokenId,
    change: TokenChange
  ) => Effect.Effect<DescribedToken, Forbidden | NotFound | InvalidInput>
  /**
   * For the operator's command line, which holds the database and so needs no principal: a token
   * for a workspace named by its id or by its owner's email.
   */
  readonly bootstrap: (
    workspace: { readonly id: string } | { readonly ownerEmail: string },
    input: TokenRequest
  ) => Effect.Effect<CreatedToken, InvalidInput | NotFound>
}>()("@podium/domain/access/ApiTokens") {
  static readonly layer = Layer.effect(
    ApiTokens,
    Effect.gen(function*() {
      const tokens = yield* ApiTokenRepository
      const workspaces = yield* WorkspaceRepository
      const secrets = yield* TokenSecrets
      const ids = yield* IdGenerator

      /** The tokens of one workspace, each with its creator (one look-up of members and one of users). */
      const described = Effect.fnUntraced(function*(workspaceId: WorkspaceId, listed: ReadonlyArray<ApiToken>) {
        const creatorIds = [...new Set(listed.flatMap((t) => t.created_by === null ? [] : [t.created_by]))]
        const members = creatorIds.length === 0 ? [] : yield* workspaces.members(workspaceId)
        const users = yield* workspaces.findUsers(creatorIds)
        const creators = new Map(users.map((u) => [u.id, { email: u.email, member: members.some((m) => m.user_id === u.id) }]))
        const now = yield* DateTime.now
        const budgeted = listed.filter((t) => t.budget_limit !== null)
        const windows = new Map(budgeted.map((t) => [t.id, windowOf(t, now)]))
        const spent = yield* tokens.spend(budgeted.map((t) => ({ tokenId: t.id, windowStart: windows.get(t.id)!.start })))
        const spendOf = new Map(budgeted.map((t, i) => [t.id, spent[i]!]))
        return listed.map((token): DescribedToken => {
          const window = windows.get(token.id)
          const spend = spendOf.get(token.id)
          return {
            token,
            creator: token.created_by === null ? null : creators.get(token.created_by) ?? { email: null, member: false },
            spend: window === undefined || spend === undefined ? null : {
              ...spend,
              period_start: window.end === null ? null : window.start,
              resets_at: window.end
            }
          }
        })
      })

      const list = Effect.fn("ApiTokens.list")(function*(principal: Principal, businessId: WorkspaceId | undefined) {
        const membership = yield* administratorOf(principal, businessId)
        const workspaceId = membership.workspace_id
        return { workspaceId, tokens: yield* described(workspaceId, yield* tokens.list(workspaceId)) }
      })

      const mint = Effect.fnUntraced(function*(workspaceId: WorkspaceId, createdBy: UserId | null, input: TokenRequest) {
        yield* Effect.fromResult(checkBudget(input))
        const now = yield* DateTime.now
        const minted = yield* secrets.mint(ApiTokenPrefix)
        const token = issue(input, {
          id: yield* ids.make(TokenId),
          workspaceId,
          displayPrefix: minted.displayPrefix,
          createdBy,
          now
        })
        yield* tokens.insert(token, minted.hash)
        return { token, secret: minted.secret }
      })

      const create = Effect.fn("ApiTokens.create")(function*(principal: Principal, input: CreateTokenInput) {
        const membership = yield* administratorOf(principal, input.business_id)
        const created = yield* mint(membership.workspace_id, membership.user_id, input)
        const email = principal._tag === "SessionPrincipal" ? principal.user.email : null
        const [described_] = yield* described(membership.workspace_id, [created.token])
        return { ...created, spend: described_!.spend, creator: { email, member: true } }
      })

      const bootstrap = Effect.fn("ApiTokens.bootstrap")(function*(
        workspace: { readonly id: string } | { readonly ownerEmail: string },
        input: TokenRequest
      ) {
        const found = yield* workspaces.findWorkspace(workspace)
        if (Option.isNone(found)) {
          return yield* new NotFound({ resource: "workspace", id: "id" in workspace ? workspace.id : workspace.ownerEmail })
        }
        const created = yield* mint(found.value, null, input)
        return { ...created, ...(yield* described(found.value, [created.token]))[0]!, creator: null }
      })

      /** A token the caller administers; one in a workspace they cannot see does not exist for them. */
      const administered = Effect.fnUntraced(function*(principal: Principal, id: TokenId) {
        const token = yield* tokens.find(id)
        const membership = Option.isSome(token) ? visibleMembership(principal, token.value.workspace_id) : undefined
        if (Option.isNone(token) || membership === undefined) {
          return yield* new NotFound({ resource: "token", id })
        }
        yield* Effect.fromResult(requireAdministrator(membership))
        return token.value
      })

      const revoke = Effect.fn("ApiTokens.revoke")(function*(principal: Principal, id: TokenId) {
        yield* administered(principal, id)
        const revoked = yield* tokens.revoke(id, yield* DateTime.now)
        if (Option.isNone(revoked)) return yield* new NotFound({ resource: "token", id })
        return (yield* described(revoked.value.workspace_id, [revoked.value]))[0]!
      })

      const remove = Effect.fn("ApiTokens.remove")(function*(principal: Principal, id: TokenId) {
        yield* administered(principal, id)
        if (!(yield* tokens.remove(id))) return yield* new NotFound({ resource: "token", id })
      })

      const amend = Effect.fn("ApiTokens.amend")(function*(principal: Principal, id: TokenId, change: TokenChange) {
        yield* administered(principal, id)
        const now = yield* DateTime.now
        const amended = yield* tokens.amend(id, (current) => amendToken(current, change, now))
        if (Option.isNone(amended)) return yield* new NotFound({ resource: "token", id })
        return (yield* described(amended.value.workspace_id, [amended.value]))[0]!
      })

      return ApiTokens.of({ list, create, revoke, remove, amend, bootstrap })
    })
  )
}

