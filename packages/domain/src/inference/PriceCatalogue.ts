import { Context, Effect } from "effect"
import type { Prices } from "../access/index.ts"

/**
 * Prices a platform publishes for its models (the router's catalogue), for candidates that name
 * none of their own. Answers `{input: null, output: null}` when the price cannot be known
 * (no catalogue, the model is not listed, the catalogue cannot be reached).
 */
export class PriceCatalogue extends Context.Service<PriceCatalogue, {
  readonly routerPrices: (modelName: string) => Effect.Effect<Prices>
}>()("@podium/domain/inference/PriceCatalogue") {
  /** No catalogue: every price unknown. */
  static readonly none = PriceCatalogue.of({ routerPrices: () => Effect.succeed({ input: null, output: null }) })
}

/** Output tokens a budgeted call may produce when the caller sets no `max_tokens` (sent upstream as its cap). */
export const BudgetDefaultMaxTokens = Context.Reference<number>("@podium/domain/inference/BudgetDefaultMaxTokens", {
  defaultValue: () => 4096
})
