import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { defaultNumberOfModels, minimumNumberOfModels } from "@podium/domain/runs"
import { Forbidden, NotFound, UpstreamError } from "../api/Errors.ts"
import { LeaderboardArchived } from "../leaderboards/LeaderboardsErrors.ts"
import { RouterIntegrationMissing } from "./RunsErrors.ts"
import { SessionAuth } from "../api/Security.ts"
import { CandidateView } from "../leaderboards/LeaderboardsApi.ts"

const Price = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const Seconds = Schema.Finite.check(Schema.isGreaterThan(0))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const AutoSelectRequest = Schema.Struct({
  number_of_models: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(minimumNumberOfModels)).annotate({
    description: `How many models to add at most; minimum ${minimumNumberOfModels}, default ${defaultNumberOfModels}`
  })),
  limit_cost: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Only models whose prices are within input_price_per_m_tokens and output_price_per_m_tokens " +
      "(at least one of them is then required)"
  })),
  input_price_per_m_tokens: Schema.optionalKey(Price.annotate({
    description: "With limit_cost: the highest prompt price, USD per million tokens"
  })),
  output_price_per_m_tokens: Schema.optionalKey(Price.annotate({
    description: "With limit_cost: the highest completion price, USD per million tokens"
  })),
  limit_latency: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Only models whose router latency is within latency_p95_seconds and latency_p99_seconds " +
      "(at least one of them is then required)"
  })),
  latency_p95_seconds: Schema.optionalKey(Seconds.annotate({
    description: "With limit_latency: the highest p95 latency over the last 30 minutes, in seconds"
  })),
  latency_p99_seconds: Schema.optionalKey(Seconds.annotate({
    description: "With limit_latency: the highest p99 latency over the last 30 minutes, in seconds"
  })),
  only_open_source: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Only open-weights models (the catalogue names their hub repository, `hugging_face_id`)"
  }))
}).annotate({ identifier: "AutoSelectRequest" })

export const AutoSelectResultView = Schema.Struct({
  added: Schema.Array(CandidateView).annotate({
    description: "The Router candidates added, cheapest first, as POST …/models returns them; fewer than " +
      "number_of_models (even none) when fewer models pass"
  }),
  considered: Count.annotate({ description: "Models of the router's catalogue looked at" }),
  rejected_by: Schema.Struct({
    unstorable_text: Count.annotate({
      description: "The catalogue entry's id, name or hugging_face_id holds U+0000 or a lone surrogate (text that " +
        "cannot be stored); such an entry is skipped, never compared"
    }),
    already_candidate: Count.annotate({
      description: "Already a Router candidate of this leaderboard (same model_name), or listed twice"
    }),
    open_source: Count.annotate({ description: "only_open_source, and the model has no hugging_face_id" }),
    cost: Count.annotate({
      description: "Over a limit_cost price, or without a usable price in the catalogue (missing, variable as -1, or " +
        "too large to be a number per million tokens)"
    }),
    latency: Count.annotate({
      description: "limit_latency, and no endpoint of the model is within every bound (no latency data fails)"
    }),
    over_limit: Count.annotate({
      description: "Passed the other rules, but number_of_models cheaper models were chosen first " +
        "(their latency is not asked)"
    })
  }).annotate({
    description: "Why the other models were not added: each is counted once, under the first rule it fails in " +
      "the order unstorable_text, already_candidate, open_source, cost, latency, over_limit; with `added`, they sum to `considered`"
  })
}).annotate({ identifier: "AutoSelectResult" })
export type AutoSelectResultView = typeof AutoSelectResultView.Type

export class AutoSelectApi extends HttpApiGroup.make("autoSelect")
  .add(
    HttpApiEndpoint.post("select", "/api/leaderboards/:leaderboard_id/models/auto-select", {
      params: { leaderboard_id: LeaderboardId },
      payload: AutoSelectRequest,
      success: AutoSelectResultView,
      error: [Forbidden, NotFound, LeaderboardArchived, RouterIntegrationMissing, UpstreamError]
    }).annotateMerge(OpenApi.annotations({
      summary: "Add the cheapest router models that meet the limits as candidates",
      description: "Reads the router's model catalogue (`GET {ROUTER_BASE_URL}/models`, prices in USD per token) " +
        "with the workspace's router integration token, and adds the cheapest `number_of_models` (default 3) " +
        "models that pass every limit as Router candidates, named after the catalogue and priced from it " +
        "(USD per million tokens). Cheapest means the lowest prompt plus completion price, ties by model id. " +
        "`limit_latency` asks the router for each model's endpoints (`GET {ROUTER_BASE_URL}/models/{id}/endpoints`, " +
        "latency percentiles of the last 30 minutes in ms), cheapest first and only as far as needed; p95 is " +
        "interpolated between p90 and p99 (p90 + 5/9 of the gap), and a model passes through its best endpoint. " +
        "Models already Router candidates are skipped, and so are catalogue entries whose text cannot be stored " +
        "(U+0000 or a lone surrogate). The candidates are added all in one write, or none. Adding fewer than `number_of_models`, even none, is not an " +
        "error: `rejected_by` says why. Needs a session of a member of the leaderboard's workspace and a router " +
        "integration of that workspace (409 `router_integration_missing`); a router that fails is 502 `upstream_error`."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Auto-Select",
    description: "Candidates chosen from the router's catalogue by price, latency and open weights."
  }))
{}
