import { decodeJwt } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, type Reply, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

/**
 * The web app's session over HTTP: a session token traded once (POST /api/session) for an
 * HttpOnly cookie holding an opaque secret, lasting no longer than the token; the CSRF token a
 * cookie-signed request that changes state must send; sign-out that ends the session on the
 * server; the cookie never on the serving path, on both transports; bearer credentials as before.
 */

let podium: Podium
/** The same database, with every route through the router (the front door off). */
let routerOnly: Podium

beforeAll(async () => {
  podium = await startPodium()
  routerOnly = await startPodium({ DATABASE_URL: podium.databaseUrl }, { fastInference: false })
})
afterAll(async () => {
  await routerOnly?.stop()
  await podium?.stop()
})

interface SetCookie {
  readonly name: string
  readonly value: string
  /** Attribute names in lower case, with their values ("" for flags). */
  readonly attributes: ReadonlyMap<string, string>
}

const setCookies = (reply: Reply): ReadonlyArray<SetCookie> =>
  reply.headers.getSetCookie().map((line) => {
    const [pair, ...rest] = line.split(";").map((part) => part.trim())
    const at = pair!.indexOf("=")
    return {
      name: pair!.slice(0, at),
      value: pair!.slice(at + 1),
      attributes: new Map(rest.map((attribute) => {
        const eq = attribute.indexOf("=")
        return eq === -1 ? [attribute.toLowerCase(), ""] : [attribute.slice(0, eq).toLowerCase(), attribute.slice(eq + 1)]
      }))
    }
  })

/** The session cookie a reply sets (the test fails without exactly one). */
const sessionCookie = (reply: Reply): SetCookie => {
  const cookies = setCookies(reply).filter((c) => c.name === "podium_session")
  expect(cookies, reply.headers.getSetCookie().join(" | ")).toHaveLength(1)
  return cookies[0]!
}

interface Opened {
  readonly reply: Reply
  /** The Cookie header a browser would send back. */
  readonly cookie: string
  readonly csrf: string
}

const open = async (token: string, on: Podium = podium, headers: Record<string, string> = {}): Promise<Opened> => {
  const reply = await on.request("POST", "/api/session", { token, headers })
  expect(reply.status, reply.text).toBe(201)
  return { reply, cookie: `podium_session=${sessionCookie(reply).value}`, csrf: reply.body.csrf_token }
}

/** A request as the browser sends it: the cookie, and the CSRF token when `csrf` is given. */
const byCookie = (
  method: string,
  path: string,
  cookie: string,
  options: { readonly csrf?: string | undefined; readonly json?: unknown; readonly on?: Podium } = {}
) =>
  (options.on ?? podium).request(method, path, {
    headers: { cookie, ...(options.csrf === undefined ? {} : { "x-podium-csrf": options.csrf }) },
    json: options.json
  })

const expectRefused = (reply: Reply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body.error.code, reply.text).toBe(code)
  expect(reply.body.error.message).toBeTypeOf("string")
}

const now = () => Math.floor(Date.now() / 1000)

describe("POST /api/session", () => {
  it("sets an HttpOnly, SameSite=Strict, Path=/ cookie holding an opaque secret, and answers who and until when", async () => {
    const token = await session("web-alice")
    const { reply, csrf } = await open(token)
    const cookie = sessionCookie(reply)
    expect(cookie.value).toMatch(/^pws_[A-Za-z0-9_-]{43}$/)
    expect(cookie.value).not.toContain(token)
    expect(cookie.attributes.has("httponly")).toBe(true)
    expect(cookie.attributes.get("samesite")?.toLowerCase()).toBe("strict")
    expect(cookie.attributes.get("path")).toBe("/")
    expect(cookie.attributes.has("domain")).toBe(false)
    // served over plain http here: a Secure cookie would not come back
    expect(cookie.attributes.has("secure")).toBe(false)
    expect(reply.body).toEqual({
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: "web-alice@example.com",
      expires_at: new Date(decodeJwt(token).exp! * 1000).toISOString(),
      csrf_token: csrf
    })
    expect(csrf).toMatch(/^[0-9a-f]{64}$/)
    // neither the secret nor the token is in the body
    expect(reply.text).not.toContain(cookie.value)
    expect(reply.text).not.toContain(token)
    // the database keeps a digest, never the secret
    const rows = await query<{ secret_hash: string }>(podium.databaseUrl, (sql) => sql`SELECT secret_hash FROM web_sessions`)
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.some((row) => row.secret_hash === cookie.value || row.secret_hash.includes(cookie.value.slice(4)))).toBe(false)
  })

  it("lasts no longer than the token: Max-Age and expires_at end at its exp", async () => {
    const token = await session("web-short", { expiresIn: "90s" })
    const exp = decodeJwt(token).exp!
    const { reply } = await open(token)
    const maxAge = Number(sessionCookie(reply).attributes.get("max-age"))
    expect(maxAge).toBeLessThanOrEqual(exp - now() + 1)
    expect(maxAge).toBeGreaterThan(80)
    expect(reply.body.expires_at).toBe(new Date(exp * 1000).toISOString())
    const stored = await query<{ expires_at: Date }>(
      podium.databaseUrl,
      (sql) => sql`SELECT expires_at FROM web_sessions WHERE email = 'web-short@example.com'`
    )
    expect(stored.map((row) => row.expires_at.getTime())).toEqual([exp * 1000])
  })

  it("refuses a token past its exp, though it is still accepted as a bearer within the clock skew", async () => {
    const late = await session("web-late", { expiresIn: "30s ago" })
    expect((await podium.request("GET", "/api/tokens", { token: late })).status).toBe(200)
    const reply = await podium.request("POST", "/api/session", { token: late })
    expectRefused(reply, 401, "unauthorized")
    expect(reply.body.error.message).toMatch(/expired/)
    expect(setCookies(reply)).toEqual([])
  })

  it("ends at exp on the server too: the cookie is refused and cleared after, and ended rows are removed", async () => {
    const { cookie } = await open(await session("web-ending", { expiresIn: "2s" }))
    expect((await byCookie("GET", "/api/session", cookie)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 2_200))
    const ended = await byCookie("GET", "/api/session", cookie)
    expectRefused(ended, 401, "unauthorized")
    const cleared = sessionCookie(ended)
    expect(cleared.value).toBe("")
    expect(cleared.attributes.get("max-age")).toBe("0")
    expectRefused(await byCookie("GET", "/api/tokens", cookie), 401, "unauthorized")
    await open(await session("web-after-ending"))
    const left = await query(podium.databaseUrl, (sql) => sql`SELECT 1 FROM web_sessions WHERE expires_at <= now()`)
    expect(left).toEqual([])
  })

  it("is Secure when served over https: PUBLIC_BASE_URL is https, or the proxy says X-Forwarded-Proto: https", async () => {
    const forwarded = await open(await session("web-proxied"), podium, { "x-forwarded-proto": "https" })
    expect(sessionCookie(forwarded.reply).attributes.has("secure")).toBe(true)
    const httpsPodium = await startPodium({ DATABASE_URL: podium.databaseUrl, PUBLIC_BASE_URL: "https://podium.example.com" })
    try {
      const opened = await open(await session("web-https"), httpsPodium)
      expect(sessionCookie(opened.reply).attributes.has("secure")).toBe(true)
      const closed = await byCookie("DELETE", "/api/session", opened.cookie, { csrf: opened.csrf, on: httpsPodium })
      expect(closed.status).toBe(204)
      expect(sessionCookie(closed).attributes.has("secure")).toBe(true)
    } finally {
      await httpsPodium.stop()
    }
  })

  it("answers bad input with 401 and no cookie: no token, an API token, a malformed or forged token, a cookie instead of a token", async () => {
    const owner = await session("web-bad-input")
    const apiToken = (await podium.request("POST", "/api/tokens", { token: owner, json: { name: "ci" } })).body.secret as string
    expect(apiToken).toMatch(/^pod_/)
    const forged = await session("web-forged", { secret: "another-secret-that-is-long-enough-0123456789" })
    for (const token of [undefined, apiToken, "not-a-token", forged]) {
      const reply = await podium.request("POST", "/api/session", { token })
      expectRefused(reply, 401, "unauthorized")
      expect(setCookies(reply)).toEqual([])
    }
    const { cookie, csrf } = await open(owner)
    const byItself = await byCookie("POST", "/api/session", cookie, { csrf })
    expectRefused(byItself, 401, "unauthorized")
    expect(byItself.body.error.message).toMatch(/Authorization: Bearer/)
  })

  it("ends the session the browser's cookie held when it opens another", async () => {
    const first = await open(await session("web-twice"))
    const second = await podium.request("POST", "/api/session", { token: await session("web-twice"), headers: { cookie: first.cookie } })
    expect(second.status).toBe(201)
    expectRefused(await byCookie("GET", "/api/session", first.cookie), 401, "unauthorized")
    expect((await byCookie("GET", "/api/session", `podium_session=${sessionCookie(second).value}`)).status).toBe(200)
  })
})

describe("GET /api/session", () => {
  it("answers the session the cookie names, as POST did, so a reload finds the reader signed in", async () => {
    const { cookie, reply } = await open(await session("web-reload"))
    const current = await byCookie("GET", "/api/session", cookie)
    expect(current.status).toBe(200)
    expect(current.body).toEqual(reply.body)
    expect(setCookies(current)).toEqual([])
  })

  it("is 401 without the cookie, or with an unknown one (which it clears)", async () => {
    expectRefused(await podium.request("GET", "/api/session"), 401, "unauthorized")
    expectRefused(await podium.request("GET", "/api/session", { token: await session("web-bearer-only") }), 401, "unauthorized")
    for (const unknown of ["podium_session=pws_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "podium_session=%ZZ", "other=1; podium_session=x"]) {
      const reply = await byCookie("GET", "/api/session", unknown)
      expectRefused(reply, 401, "unauthorized")
      expect(sessionCookie(reply).attributes.get("max-age")).toBe("0")
    }
  })
})

describe("requests the cookie signs in", () => {
  it("read without the CSRF token, and change state only with it: 403 csrf_token_required without or with another", async () => {
    const { cookie, csrf } = await open(await session("web-csrf"))
    expect((await byCookie("GET", "/api/tokens", cookie)).status).toBe(200)
    const without = await byCookie("POST", "/api/tokens", cookie, { json: { name: "no csrf" } })
    expectRefused(without, 403, "csrf_token_required")
    expect(without.body.error.message).toMatch(/X-Podium-CSRF/)
    expectRefused(await byCookie("POST", "/api/tokens", cookie, { csrf: csrf.replace(/^./, csrf[0] === "a" ? "b" : "a"), json: { name: "wrong" } }), 403, "csrf_token_required")
    expectRefused(await byCookie("POST", "/api/tokens", cookie, { csrf: "", json: { name: "empty" } }), 403, "csrf_token_required")
    // another session's token is another token
    const other = await open(await session("web-csrf-other"))
    expectRefused(await byCookie("POST", "/api/tokens", cookie, { csrf: other.csrf, json: { name: "other's" } }), 403, "csrf_token_required")
    const listed = async () => (await byCookie("GET", "/api/tokens", cookie)).body.tokens.map((t: { name: string }) => t.name)
    expect(await listed()).toEqual([])

    const created = await byCookie("POST", "/api/tokens", cookie, { csrf, json: { name: "with csrf" } })
    expect(created.status, created.text).toBe(201)
    const id = created.body.token.id as string
    expectRefused(await byCookie("PATCH", `/api/tokens/${id}`, cookie, { json: { name: "renamed" } }), 403, "csrf_token_required")
    expect((await byCookie("PATCH", `/api/tokens/${id}`, cookie, { csrf, json: { name: "renamed" } })).status).toBe(200)
    expectRefused(await byCookie("DELETE", `/api/tokens/${id}`, cookie), 403, "csrf_token_required")
    expect(await listed()).toEqual(["renamed"])
    expect((await byCookie("DELETE", `/api/tokens/${id}`, cookie, { csrf })).status).toBe(200)
    expect(await listed()).toEqual([])
    // leaderboards (API-token routes) take the cookie alike
    expectRefused(await byCookie("POST", "/api/leaderboards", cookie, { json: { name: "b", dataset_type: "PUSH" } }), 403, "csrf_token_required")
    expect((await byCookie("POST", "/api/leaderboards", cookie, { csrf, json: { name: "b", dataset_type: "PUSH" } })).status).toBe(201)
  })

  it("act as the session's user, in the same workspace a bearer session of that user acts in", async () => {
    const token = await session("web-same-user")
    const { cookie, csrf } = await open(token)
    const created = await byCookie("POST", "/api/leaderboards", cookie, { csrf, json: { name: "mine", dataset_type: "PUSH" } })
    expect(created.status).toBe(201)
    const byBearer = await podium.request("GET", `/api/leaderboards/${created.body.leaderboard.id}`, { token })
    expect(byBearer.status).toBe(200)
  })

  it("are refused on the serving path on both transports: inference, chat completions and the OpenAI model list take bearers alone", async () => {
    const { cookie, csrf } = await open(await session("web-v1"))
    const id = "00000000-0000-4000-8000-000000000001"
    const serving = [
      `/v1/leaderboard/${id}/inference`,
      `/v1/leaderboard/${id}/chat/completions`,
      `/v1/models/${id}/inference`,
      `/v1/models/${id}/chat/completions`,
      `/v1/models/${id}/versions/${id}/inference`
    ]
    for (const on of [podium, routerOnly]) {
      for (const path of serving) {
        const reply = await byCookie("POST", path, cookie, { csrf, json: { input: "hello" }, on })
        expectRefused(reply, 401, "unauthorized")
        expect(reply.body.error.message).toMatch(/Authorization: Bearer/)
      }
      for (const path of ["/v1/models", `/v1/models/leaderboard/${id}`]) expectRefused(await byCookie("GET", path, cookie, { on }), 401, "unauthorized")
    }
  })

  it("sign in the web app's other /v1 routes (traces, datasets), with the CSRF token to change state, on both transports", async () => {
    const { cookie, csrf } = await open(await session("web-v1-datasets"))
    const created = await byCookie("POST", "/api/leaderboards", cookie, { csrf, json: { name: "pushed", dataset_type: "PUSH" } })
    expect(created.status, created.text).toBe(201)
    const id = created.body.leaderboard.id as string
    for (const on of [podium, routerOnly]) {
      expect((await byCookie("GET", `/v1/leaderboard/${id}/dataset/status`, cookie, { on })).status).toBe(200)
      expect((await byCookie("GET", `/v1/leaderboard/${id}/traces`, cookie, { on })).status).toBe(200)
      expectRefused(await byCookie("POST", `/v1/leaderboard/${id}/dataset/consolidate`, cookie, { on }), 403, "csrf_token_required")
      expectRefused(await byCookie("POST", `/v1/leaderboard/${id}/dataset/push`, cookie, { json: [{ input: "q" }], on }), 403, "csrf_token_required")
    }
    const pushed = await byCookie("POST", `/v1/leaderboard/${id}/dataset/push`, cookie, { csrf, json: [{ input: "q" }] })
    expect(pushed.status, pushed.text).toBe(202)
    const consolidated = await byCookie("POST", `/v1/leaderboard/${id}/dataset/consolidate`, cookie, { csrf, on: routerOnly })
    expect(consolidated.status, consolidated.text).toBe(200)
    expect(consolidated.body.version.row_count).toBe(1)
  })
})

describe("bearer credentials", () => {
  it("are unchanged: no CSRF token, and a cookie beside them counts for nothing", async () => {
    const token = await session("web-bearer")
    const created = await podium.request("POST", "/api/tokens", { token, json: { name: "by bearer" } })
    expect(created.status).toBe(201)
    const apiToken = created.body.secret as string
    expect((await podium.request("POST", "/api/leaderboards", { token: apiToken, json: { name: "api", dataset_type: "PUSH" } })).status).toBe(201)
    // a bearer beside a cookie of another user acts as the bearer, and needs no CSRF token
    const other = await open(await session("web-bearer-other"))
    const beside = await podium.request("POST", "/api/tokens", { token, json: { name: "beside" }, headers: { cookie: other.cookie } })
    expect(beside.status).toBe(201)
    const names = (await podium.request("GET", "/api/tokens", { token })).body.tokens.map((t: { name: string }) => t.name)
    expect(names.sort()).toEqual(["beside", "by bearer"])
    // a failing bearer beside a good cookie is still 401
    expectRefused(await podium.request("GET", "/api/tokens", { token: "not-a-token", headers: { cookie: other.cookie } }), 401, "unauthorized")
  })
})

describe("DELETE /api/session", () => {
  it("ends the session on the server and clears the cookie: the old cookie signs nothing in afterwards", async () => {
    const { cookie, csrf } = await open(await session("web-bye"))
    expectRefused(await byCookie("DELETE", "/api/session", cookie), 403, "csrf_token_required")
    expect((await byCookie("GET", "/api/session", cookie)).status).toBe(200)
    const closed = await byCookie("DELETE", "/api/session", cookie, { csrf })
    expect(closed.status).toBe(204)
    const cleared = sessionCookie(closed)
    expect(cleared.value).toBe("")
    expect(cleared.attributes.get("max-age")).toBe("0")
    expect(cleared.attributes.get("path")).toBe("/")
    // a copy of the cookie kept anywhere is now worthless, on either transport
    for (const on of [podium, routerOnly]) {
      expectRefused(await byCookie("GET", "/api/session", cookie, { on }), 401, "unauthorized")
      expectRefused(await byCookie("GET", "/api/tokens", cookie, { on }), 401, "unauthorized")
      expectRefused(await byCookie("POST", "/api/tokens", cookie, { csrf, json: { name: "after" }, on }), 401, "unauthorized")
    }
    expectRefused(await byCookie("DELETE", "/api/session", cookie, { csrf }), 401, "unauthorized")
  })
})
