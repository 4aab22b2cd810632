import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, startPodium } from "./support/Podium.ts"

let jwksServer: Server
let jwksUrl: string
let fetches = 0
let signingKey: import("node:crypto").webcrypto.CryptoKey
let strangerKey: import("node:crypto").webcrypto.CryptoKey

beforeAll(async () => {
  const pair = await generateKeyPair("RS256")
  signingKey = pair.privateKey
  strangerKey = (await generateKeyPair("RS256")).privateKey
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" }
  jwksServer = createServer((_req, res) => {
    fetches++
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve))
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`
})
afterAll(() => new Promise<void>((resolve) => jwksServer.close(() => resolve())))

const sign = (key: import("node:crypto").webcrypto.CryptoKey, claims: { iss?: string; aud?: string } = {}) => {
  let jwt = new SignJWT({ email: "jwks@example.com" })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setSubject("jwks-user")
    .setIssuedAt()
    .setExpirationTime("10m")
  if (claims.iss) jwt = jwt.setIssuer(claims.iss)
  if (claims.aud) jwt = jwt.setAudience(claims.aud)
  return jwt.sign(key)
}

describe("sessions verified against a remote JWKS", () => {
  let podium: Podium
  beforeAll(async () => {
    podium = await startPodium({
      SESSION_JWT_SECRET: undefined,
      SESSION_JWKS_URL: jwksUrl,
      SESSION_JWT_ISSUER: "https://id.example.com/",
      SESSION_JWT_AUDIENCE: "podium"
    })
  })
  afterAll(() => podium.stop())

  it("accepts a token signed by a published key with the right issuer and audience", async () => {
    const token = await sign(signingKey, { iss: "https://id.example.com/", aud: "podium" })
    const reply = await podium.request("GET", "/api/tokens", { token })
    expect(reply.status).toBe(200)
    expect(fetches).toBeGreaterThan(0)
  })

  it("refuses another key, another issuer or audience, and HS256", async () => {
    const refused = [
      await sign(strangerKey, { iss: "https://id.example.com/", aud: "podium" }),
      await sign(signingKey, { iss: "https://evil.example.com/", aud: "podium" }),
      await sign(signingKey, { iss: "https://id.example.com/", aud: "someone-else" }),
      await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("x").setExpirationTime("10m")
        .sign(new TextEncoder().encode("a-shared-secret-that-is-long-enough-000000"))
    ]
    for (const token of refused) {
      const reply = await podium.request("GET", "/api/tokens", { token })
      expect(reply.status).toBe(401)
      expect(reply.headers.get("www-authenticate")).toBe("Bearer")
    }
  })
})

describe("the JWKS fetch goes through the SSRF guard", () => {
  let podium: Podium
  beforeAll(async () => {
    podium = await startPodium({
      SESSION_JWT_SECRET: undefined,
      SESSION_JWKS_URL: jwksUrl,
      ALLOW_PRIVATE_NETWORK_TARGETS: "false"
    })
  })
  afterAll(() => podium.stop())

  it("a JWKS on a loopback address is never fetched when private targets are not allowed", async () => {
    const before = fetches
    const reply = await podium.request("GET", "/api/tokens", { token: await sign(signingKey) })
    expect(reply.status).toBe(401)
    expect(fetches).toBe(before)
  })
})
