import { Duration, Layer } from "effect"
import { BudgetDefaultMaxTokens } from "@podium/domain/inference"
import { AllowPrivateWebhooks, FineTuneBaseModels, FineTunePollInterval, WebhookRetryBase } from "@podium/domain/models"
import { RunConcurrency } from "@podium/domain/runs"
import { Links } from "@podium/domain/shared"
import { type PodiumConfig, publicBaseUrl } from "./Config.ts"

/** The domain's settings, from the config. */
export const layerSettings = (config: PodiumConfig) =>
  Layer.mergeAll(
    Layer.succeed(RunConcurrency, config.runConcurrency),
    Layer.succeed(FineTuneBaseModels, config.fineTuneBaseModels),
    Layer.succeed(FineTunePollInterval, Duration.millis(config.fineTunePollIntervalMs)),
    Layer.succeed(AllowPrivateWebhooks, config.allowPrivateNetworkTargets),
    Layer.succeed(WebhookRetryBase, Duration.millis(config.webhookRetryBaseMs)),
    Layer.succeed(BudgetDefaultMaxTokens, config.budgetDefaultMaxTokens)
  )

/** The links Podium hands out (invites, traces, dataset push, model versions), under PUBLIC_BASE_URL. */
export const layerLinks = (config: PodiumConfig) => {
  const base = publicBaseUrl(config)
  return Layer.succeed(Links, Links.of({
    inviteAcceptUrl: (invite) => {
      const target = new URL(invite.redirect_to ?? `${base}/`)
      target.searchParams.set("invite_id", invite.id)
      target.searchParams.set("business_id", invite.workspace_id)
      return target.toString()
    },
    tracesUrl: (leaderboardId) => `${base}/v1/leaderboard/${leaderboardId}/traces?format=jsonl`,
    datasetPushUrl: (leaderboardId) => `${base}/v1/leaderboard/${leaderboardId}/dataset/push`,
    modelVersionInferenceUrl: (modelId, versionId) => `${base}/v1/models/${modelId}/versions/${versionId}/inference`
  }))
}
