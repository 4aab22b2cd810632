import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { exportJWK, generateKeyPair, SignJWT } from "jose"

/**
 * A loopback OpenID Connect provider for a browser app (a public client): discovery, an
 * authorization endpoint that signs in `user` at once and sends the browser back with a code, a
 * token endpoint that checks the PKCE verifier (S256) and answers an RS256 ID token with the nonce,
 * and its JWKS. Its token endpoint allows cross-origin calls, as providers do for such clients.
 */
export interface OidcFake {
  readonly issuer: string
  readonly clientId: string
  /** Who signs in next. */
  user: { readonly sub: string; readonly email: string }
  /** Token requests seen, as form fields. */
  readonly tokenRequests: Array<Record<string, string>>
  readonly close: () => Promise<void>
}

export const startOidcFake = async (clientId = "podium-web"): Promise<OidcFake> => {
  const { privateKey, publicKey } = await generateKeyPair("RS256")
  const jwk = { ...(await exportJWK(publicKey)), kid: "fake-key", alg: "RS256", use: "sig" }
  const codes = new Map<string, { challenge: string; nonce: string; redirectUri: string; user: OidcFake["user"] }>()
  const fake = { clientId, user: { sub: "oidc-user", email: "oidc-user@example.com" }, tokenRequests: [] } as unknown as {
    -readonly [K in keyof OidcFake]: OidcFake[K]
  }
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*", "cache-control": "no-store" })
    res.end(JSON.stringify(body))
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", fake.issuer)
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": "POST, GET",
          "access-control-allow-headers": "content-type, accept, authorization, dpop"
        })
        return res.end()
      }
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(res, 200, {
          issuer: fake.issuer,
          authorization_endpoint: `${fake.issuer}/authorize`,
          token_endpoint: `${fake.issuer}/token`,
          jwks_uri: `${fake.issuer}/jwks`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"],
          id_token_signing_alg_values_supported: ["RS256"]
        })
      }
      if (url.pathname === "/jwks") return json(res, 200, { keys: [jwk] })
      if (url.pathname === "/authorize") {
        const q = url.searchParams
        const redirectUri = q.get("redirect_uri") ?? ""
        if (q.get("client_id") !== clientId || q.get("code_challenge_method") !== "S256" || q.get("response_type") !== "code") {
          return json(res, 400, { error: "invalid_request" })
        }
        const code = randomBytes(16).toString("hex")
        codes.set(code, { challenge: q.get("code_challenge") ?? "", nonce: q.get("nonce") ?? "", redirectUri, user: fake.user })
        const back = new URL(redirectUri)
        back.searchParams.set("code", code)
        back.searchParams.set("state", q.get("state") ?? "")
        back.searchParams.set("iss", fake.issuer)
        res.writeHead(302, { location: back.toString() })
        return res.end()
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")))
        fake.tokenRequests.push(form)
        const grant = codes.get(form["code"] ?? "")
        codes.delete(form["code"] ?? "")
        const verified = grant !== undefined && form["client_id"] === clientId && form["redirect_uri"] === grant.redirectUri &&
          createHash("sha256").update(form["code_verifier"] ?? "").digest("base64url") === grant.challenge
        if (!verified) return json(res, 400, { error: "invalid_grant" })
        const idToken = await new SignJWT({ email: grant.user.email, email_verified: true, nonce: grant.nonce })
          .setProtectedHeader({ alg: "RS256", kid: "fake-key" })
          .setIssuer(fake.issuer)
          .setAudience(clientId)
          .setSubject(grant.user.sub)
          .setIssuedAt()
          .setExpirationTime("1h")
          .sign(privateKey)
        return json(res, 200, { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 3600, id_token: idToken })
      }
      json(res, 404, { error: "not_found" })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  fake.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}
