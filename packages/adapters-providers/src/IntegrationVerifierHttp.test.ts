import { assert, describe, it } from "@effect/vitest"
import { IntegrationVerifier } from "@podium/domain/integrations"
import { Effect, Layer, Redacted } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { IntegrationVerifierHttp, type IntegrationVerifierHttpOptions } from "./IntegrationVerifierHttp.ts"
import { SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"

const routerKey = {
  data: {
    label: "ci key",
    usage: 1.5,
    limit: null,
    limit_remaining: null,
    is_free_tier: false,
    is_provisioning_key: false,
    rate_limit: { requests: 50, interval: "10s" }
  }
}

const hubWhoAmI = {
  type: "user",
  id: "6500000000000000000000aa",
  name: "ada",
  fullname: "Ada Lovelace",
  email: "ada@example.test",
  orgs: [{ name: "analytical-engines", roleInOrg: "admin" }],
  auth: {
    type: "access_token",
    accessToken: { displayName: "podium", role: "read", createdAt: "2026-01-01T00:00:00.000Z", token: "hf_good" }
  }
}

const json = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))

// One fake for both providers: the bearer token picks the answer.
const seen: Array<{ path: string; authorization: string | undefined }> = []
const fake = (request: IncomingMessage, response: ServerResponse) => {
  const authorization = request.headers.authorization
  seen.push({ path: request.url ?? "", authorization })
  const token = authorization?.replace(/^Bearer /, "") ?? ""
  const router = request.url === "/api/v1/key"
  if (!router && request.url !== "/hub/api/whoami-v2") return response.writeHead(404).end()
  if (token.endsWith("good")) return json(response, 200, router ? routerKey : hubWhoAmI)
  if (token.endsWith("bad")) {
    return router
      ? json(response, 401, { error: { message: "User not found.", code: 401 } })
      : json(response, 401, { error: "Invalid credentials in Authorization header" })
  }
  if (token.endsWith("echo")) return json(response, 401, { error: { message: `Key ${token} is revoked`, code: 401 } })
  if (token.endsWith("forbidden")) return response.writeHead(403).end("<html>nope</html>")
  if (token.endsWith("boom")) return json(response, 500, { error: { message: "Internal error", code: 500 } })
  if (token.endsWith("garbled")) return response.writeHead(200).end("{not json")
  if (token.endsWith("shape")) return json(response, 200, { data: "unexpected" })
  if (token.endsWith("hang")) return
  response.writeHead(400).end()
}

const upstream = loopbackServer(fake)

const verifierLayer = (options?: Partial<IntegrationVerifierHttpOptions>) =>
  IntegrationVerifierHttp.layer({ routerBaseUrl: `${upstream.url()}/api/v1/`, hubBaseUrl: `${upstream.url()}/hub`, ...options }).pipe(
    Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))
  )

const verify = (provider: "router" | "hub", token: string, options?: Partial<IntegrationVerifierHttpOptions>) =>
  IntegrationVerifier.use((verifier) => verifier.verify(provider, Redacted.make(token))).pipe(
    Effect.provide(verifierLayer(options))
  )

describe("IntegrationVerifierHttp", () => {
  it.effect("reads the router's key report and sends the token as a bearer", () =>
    Effect.gen(function*() {
      const account = yield* verify("router", "sk-or-good")
      assert.deepStrictEqual(account, {
        provider: "router",
        label: "ci key",
        details: { usage: 1.5, limit: null, limit_remaining: null, is_free_tier: false }
      })
      assert.deepStrictEqual(seen.at(-1), { path: "/api/v1/key", authorization: "Bearer sk-or-good" })
    }))

  it.effect("reads the hub's whoami and keeps nothing token-like", () =>
    Effect.gen(function*() {
      const account = yield* verify("hub", "hf_good")
      assert.deepStrictEqual(account, {
        provider: "hub",
        label: "ada",
        details: {
          type: "user",
          name: "ada",
          fullname: "Ada Lovelace",
          orgs: ["analytical-engines"],
          token_name: "podium",
          token_role: "read"
        }
      })
      assert.notInclude(JSON.stringify(account), "hf_good")
      assert.deepStrictEqual(seen.at(-1), { path: "/hub/api/whoami-v2", authorization: "Bearer hf_good" })
    }))

  it.effect("turns 401 into a rejection with the provider's own message", () =>
    Effect.gen(function*() {
      const router = yield* Effect.flip(verify("router", "sk-or-bad"))
      assert.strictEqual(router._tag, "IntegrationTokenRejected")
      assert.strictEqual(router.reason, "User not found.")
      const hub = yield* Effect.flip(verify("hub", "hf_bad"))
      assert.strictEqual(hub._tag, "IntegrationTokenRejected")
      assert.strictEqual(hub.reason, "Invalid credentials in Authorization header")
    }))

  it.effect("turns 403 into a rejection even without a readable body", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(verify("hub", "hf_forbidden"))
      assert.strictEqual(error._tag, "IntegrationTokenRejected")
      assert.strictEqual(error.reason, "the hub answered 403")
    }))

  it.effect("never repeats the token in a rejection", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(verify("router", "sk-or-secret-echo"))
      assert.strictEqual(error.reason, "Key [redacted] is revoked")
    }))

  it.effect("reports a failing, garbled or odd answer as unavailable", () =>
    Effect.gen(function*() {
      for (const [provider, token] of [["router", "boom"], ["hub", "boom"], ["router", "garbled"], ["hub", "garbled"], ["router", "shape"]] as const) {
        const error = yield* Effect.flip(verify(provider, token))
        assert.strictEqual(error._tag, "IntegrationUnavailable", `${provider} ${token}`)
        assert.strictEqual(error.provider, provider)
      }
    }))

  it.effect("reports an unconfigured provider as unavailable without calling out", () =>
    Effect.gen(function*() {
      const before = seen.length
      const error = yield* Effect.flip(verify("router", "sk-or-good", { routerBaseUrl: undefined }))
      assert.strictEqual(error._tag, "IntegrationUnavailable")
      assert.strictEqual(error.reason, "the router is not configured")
      assert.strictEqual(seen.length, before)
    }))

  // live: the timeout needs the real clock, not it.effect's TestClock
  it.live("reports an unreachable or silent provider as unavailable", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(verify("hub", "hf_good", { hubBaseUrl: "http://127.0.0.1:1" }))
      assert.strictEqual(refused._tag, "IntegrationUnavailable")
      assert.strictEqual(refused.reason, "could not reach the hub")
      const silent = yield* Effect.flip(verify("router", "sk-or-hang", { timeout: "200 millis" }))
      assert.strictEqual(silent._tag, "IntegrationUnavailable")
      assert.strictEqual(silent.reason, "the router did not answer in time")
    }))
})
