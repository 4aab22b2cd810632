import {
  IntegrationTokenRejected,
  type IntegrationProvider,
  IntegrationUnavailable,
  type IntegrationAccount,
  IntegrationVerifier,
} from "@podium/domain/integrations"
import { type Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { redactSecret } from "./Redaction.ts"

export interface IntegrationVerifierHttpOptions {
  /** OpenRouter-style API root, e.g. `https://openrouter.ai/api/v1`; unset means the router is unavailable. */
  readonly routerBaseUrl?: string | undefined
  /** Hugging Face-style hub root, e.g. `https://huggingface.co`; unset means the hub is unavailable. */
  readonly hubBaseUrl?: string | undefined
  /** Bounds one verification, body included. Default 10 seconds. */
  readonly timeout?: Duration.Input | undefined
}

const optionalNullable = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

const RouterKey = Schema.fromJsonString(Schema.Struct({
  data: Schema.Struct({
    label: optionalNullable(Schema.String),
    usage: optionalNullable(Schema.Number),
    limit: optionalNullable(Schema.Number),
    limit_remaining: optionalNullable(Schema.Number),
    is_free_tier: optionalNullable(Schema.Boolean)
  })
}))
const RouterError = Schema.fromJsonString(Schema.Struct({ error: Schema.Struct({ message: Schema.String }) }))

const HubWhoAmI = Schema.fromJsonString(Schema.Struct({
  type: optionalNullable(Schema.String),
  name: Schema.String,
  fullname: optionalNullable(Schema.String),
  orgs: optionalNullable(Schema.Array(Schema.Struct({ name: Schema.String }))),
  auth: optionalNullable(Schema.Struct({
    accessToken: optionalNullable(Schema.Struct({
      displayName: optionalNullable(Schema.String),
      role: optionalNullable(Schema.String)
    }))
  }))
}))
const HubError = Schema.fromJsonString(Schema.Struct({ error: Schema.String }))

interface Endpoint {
  readonly path: string
  /** Picks the fields worth keeping; nothing else of the provider's answer is passed on. */
  readonly account: (body: string) => Option.Option<Omit<IntegrationAccount, "provider">>
  readonly rejection: (body: string) => Option.Option<string>
}

const endpoints: Record<IntegrationProvider, Endpoint> = {
  router: {
    path: "/key",
    account: (body) =>
      Schema.decodeUnknownOption(RouterKey)(body).pipe(Option.map(({ data }) => ({
        label: data.label ?? null,
        details: {
          usage: data.usage ?? null,
          limit: data.limit ?? null,
          limit_remaining: data.limit_remaining ?? null,
          is_free_tier: data.is_free_tier ?? null
        }
      }))),
    rejection: (body) => Schema.decodeUnknownOption(RouterError)(body).pipe(Option.map((_) => _.error.message))
  },
  hub: {
    path: "/api/whoami-v2",
    account: (body) =>
      Schema.decodeUnknownOption(HubWhoAmI)(body).pipe(Option.map((whoami) => ({
        label: whoami.name,
        details: {
          type: whoami.type ?? null,
          name: whoami.name,
          fullname: whoami.fullname ?? null,
          orgs: (whoami.orgs ?? []).map((org) => org.name),
          token_name: whoami.auth?.accessToken?.displayName ?? null,
          token_role: whoami.auth?.accessToken?.role ?? null
        }
      }))),
    rejection: (body) => Schema.decodeUnknownOption(HubError)(body).pipe(Option.map((_) => _.error))
  }
}

/** A provider's words go to the user: keep them short and never let them repeat the token in any form. */
const sanitise = (reason: string, token: Redacted.Redacted<string>) => redactSecret(reason, Redacted.value(token)).slice(0, 200)

const make = Effect.fnUntraced(function*(options: IntegrationVerifierHttpOptions) {
  const client = yield* HttpClient.HttpClient
  const baseUrls: Record<IntegrationProvider, string | undefined> = {
    router: options.routerBaseUrl,
    hub: options.hubBaseUrl
  }

  const verify = Effect.fn("IntegrationVerifierHttp.verify")(function*(
    provider: IntegrationProvider,
    token: Redacted.Redacted<string>
  ): Effect.fn.Return<IntegrationAccount, IntegrationTokenRejected | IntegrationUnavailable> {
    const baseUrl = baseUrls[provider]
    if (baseUrl === undefined || baseUrl === "") {
      return yield* new IntegrationUnavailable({ provider, reason: `the ${provider} is not configured` })
    }
    const endpoint = endpoints[provider]
    const request = HttpClientRequest.get(`${baseUrl.replace(/\/+$/, "")}${endpoint.path}`).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.acceptJson
    )
    const { status, body } = yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (body) => ({ status: response.status, body }))),
      Effect.timeout(options.timeout ?? "10 seconds"),
      Effect.mapError((error) =>
        new IntegrationUnavailable({
          provider,
          reason: error._tag === "TimeoutError" ? `the ${provider} did not answer in time` : `could not reach the ${provider}`
        })
      )
    )
    if (status === 401 || status === 403) {
      const reason = Option.getOrElse(endpoint.rejection(body), () => `the ${provider} answered ${status}`)
      return yield* new IntegrationTokenRejected({ provider, reason: sanitise(reason, token) })
    }
    if (status < 200 || status >= 300) {
      return yield* new IntegrationUnavailable({ provider, reason: `the ${provider} answered ${status}` })
    }
    const account = endpoint.account(body)
    if (Option.isNone(account)) {
      return yield* new IntegrationUnavailable({ provider, reason: `the ${provider} sent an unexpected answer` })
    }
    return { provider, ...account.value }
  })

  return IntegrationVerifier.of({ verify })
})

/** Checks tokens against the providers' own "who am I" endpoints over the given `HttpClient`. */
export const IntegrationVerifierHttp = {
  layer: (options: IntegrationVerifierHttpOptions): Layer.Layer<IntegrationVerifier, never, HttpClient.HttpClient> =>
    Layer.effect(IntegrationVerifier, make(options))
}
