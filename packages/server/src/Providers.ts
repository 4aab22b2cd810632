import { Duration, Layer, Option } from "effect"
import { ChatProviderOpenAi } from "@podium/adapters-providers/ChatProviderOpenAi"
import { FineTuningApiOpenAi } from "@podium/adapters-providers/FineTuningApiOpenAi"
import { HubDatasetsHttp } from "@podium/adapters-providers/HubDatasetsHttp"
import { IntegrationVerifierHttp } from "@podium/adapters-providers/IntegrationVerifierHttp"
import { MailerLog } from "@podium/adapters-providers/MailerLog"
import { MailerSmtp } from "@podium/adapters-providers/MailerSmtp"
import { PriceCatalogueRouter } from "@podium/adapters-providers/PriceCatalogueRouter"
import { RouterCatalogueHttp } from "@podium/adapters-providers/RouterCatalogueHttp"
import { RunDatasetSourceHttp } from "@podium/adapters-providers/RunDatasetSourceHttp"
import { WebhookSenderHttp } from "@podium/adapters-providers/WebhookSenderHttp"
import type { PodiumConfig } from "./Config.ts"

const layerMailer = (config: PodiumConfig) =>
  Option.match(config.smtpUrl, {
    onSome: (url) => MailerSmtp.layer({ url, from: config.mailFrom }),
    onNone: () => MailerLog.layer
  })

/**
 * The adapters to the services Podium calls, as configured: the router (integrations, prices, its
 * catalogue, chat completions), the hub (datasets), the fine-tuning API, webhook receivers and mail.
 * They call out through SafeHttp.
 */
export const layerProviders = (config: PodiumConfig) =>
  Layer.mergeAll(
    IntegrationVerifierHttp.layer({
      routerBaseUrl: Option.getOrUndefined(config.routerBaseUrl),
      hubBaseUrl: Option.getOrUndefined(config.hubBaseUrl)
    }),
    HubDatasetsHttp.layer({ hubBaseUrl: Option.getOrUndefined(config.hubBaseUrl) }),
    RunDatasetSourceHttp.layer({ hubBaseUrl: Option.getOrUndefined(config.hubBaseUrl) }),
    FineTuningApiOpenAi.layer({
      baseUrl: Option.getOrUndefined(config.fineTuneBaseUrl),
      apiKey: Option.getOrUndefined(config.fineTuneApiKey),
      timeout: Duration.millis(config.providerTimeoutMs)
    }),
    WebhookSenderHttp.layer({}),
    PriceCatalogueRouter.layer({ routerBaseUrl: Option.getOrUndefined(config.routerBaseUrl) }),
    RouterCatalogueHttp.layer({ routerBaseUrl: Option.getOrUndefined(config.routerBaseUrl) }),
    ChatProviderOpenAi.layer({
      routerBaseUrl: Option.getOrUndefined(config.routerBaseUrl),
      hubBaseUrl: Option.getOrUndefined(config.hubBaseUrl),
      timeout: Duration.millis(config.providerTimeoutMs)
    }),
    layerMailer(config)
  )
