import { Effect } from "effect"
import type * as Shared from "@podium/domain/shared"
import { accessErrors } from "../access/AccessErrors.ts"
import * as ApiErrors from "../api/Errors.ts"
import { apiError, type ErrorAnswers } from "../api/Errors.ts"
import { datasetsErrors } from "../datasets/DatasetsErrors.ts"
import { humanErrors } from "../human/HumanErrors.ts"
import { inferenceErrors } from "../inference/InferenceErrors.ts"
import { integrationsErrors } from "../integrations/IntegrationsErrors.ts"
import { leaderboardsErrors } from "../leaderboards/LeaderboardsErrors.ts"
import { modelsErrors } from "../models/ModelsErrors.ts"
import { runsErrors } from "../runs/RunsErrors.ts"

const requestParts = new Set<unknown>(["payload", "query", "params", "headers"])

/** A use case names the field it refused; the contract's path also names the request part (the payload unless it says). */
const issuePath = (path: ReadonlyArray<string | number>) => requestParts.has(path[0]) ? path : ["payload", ...path]

/** The errors every context shares (`shared/CommonErrors.ts`). */
const sharedErrors = {
  NotFound: (e) => Effect.fail(apiError(ApiErrors.NotFound, `No ${e.resource} ${e.id}`)),
  InvalidInput: (e) =>
    Effect.fail(apiError(ApiErrors.ValidationFailed, e.message, {
      issues: [{ path: issuePath(e.path), message: e.message }]
    }))
} satisfies ErrorAnswers<typeof Shared>

/**
 * Domain errors are not HTTP errors: each context's `<Context>Errors.ts` decides the status and code
 * of its own (checked there against what its domain module exports), and this joins them.
 */
export const toApiError = {
  ...sharedErrors,
  ...accessErrors,
  ...leaderboardsErrors,
  ...inferenceErrors,
  ...humanErrors,
  ...integrationsErrors,
  ...datasetsErrors,
  ...runsErrors,
  ...modelsErrors
} as const

type Mapper = typeof toApiError
type DomainError = { readonly _tag: keyof Mapper }
type ApiErrorFor<E> = E extends { readonly _tag: infer T extends keyof Mapper }
  ? ReturnType<Mapper[T]> extends Effect.Effect<any, infer X, any> ? X : never
  : never

/** Maps every domain error an effect can fail with to its contract error. */
export const mapDomainErrors = <A, E extends DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorFor<E>, R> =>
  Effect.catch(effect, (e) => {
    // the mapper for e's own tag: TypeScript cannot pair a union of functions with the union of their arguments
    const toApi = toApiError[e._tag] as (e: DomainError) => Effect.Effect<never, unknown>
    return toApi(e) as Effect.Effect<never, ApiErrorFor<E>>
  })
