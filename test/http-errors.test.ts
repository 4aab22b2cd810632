import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, startPodium } from "./support/Podium.ts"

let podium: Podium
let owner: string

beforeAll(async () => {
  podium = await startPodium()
  owner = await session("errors-owner")
})
afterAll(() => podium.stop())

const expectErrorBody = (body: unknown, code: string) => {
  expect(body).toMatchObject({ error: { code, message: expect.any(String) } })
}

describe("health", () => {
  it("answers without a credential, with a request id", async () => {
    const reply = await podium.request("GET", "/healthz")
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ ok: true, service: "podium", database: "up" })
    expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("echoes a sane caller request id and replaces an unsafe one", async () => {
    const kept = await podium.request("GET", "/healthz", { headers: { "x-request-id": "trace-abc.123" } })
    expect(kept.headers.get("x-request-id")).toBe("trace-abc.123")
    const replaced = await podium.request("GET", "/healthz", { headers: { "x-request-id": "bad id with spaces" } })
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id with spaces")
  })
})

describe("the contract's error body", () => {
  it("404 for an unknown route", async () => {
    const reply = await podium.request("GET", "/api/nothing-here")
    expect(reply.status).toBe(404)
    expectErrorBody(reply.body, "not_found")
    expect(reply.headers.get("x-request-id")).toBeTruthy()
  })

  it("405 with Allow for a known path and the wrong method", async () => {
    const reply = await podium.request("PUT", "/api/tokens")
    expect(reply.status).toBe(405)
    expectErrorBody(reply.body, "method_not_allowed")
    expect(reply.headers.get("allow")).toContain("GET")
    expect(reply.headers.get("allow")).toContain("POST")
  })

  it("400 validation_failed with the failing paths", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "", scopes: ["leaderboards:read", "root"], expires_in: "2d" }
    })
    expect(reply.status).toBe(400)
    expectErrorBody(reply.body, "validation_failed")
    const paths = reply.body.error.details.issues.map((i: { path: Array<string | number> }) => i.path.join("."))
    expect(paths).toEqual(expect.arrayContaining(["payload.name", "payload.scopes.1", "payload.expires_in"]))
  })

  it("400 for malformed JSON", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: "{\"name\": ",
      headers: { "content-type": "application/json" }
    })
    expect(reply.status).toBe(400)
    expectErrorBody(reply.body, "validation_failed")
    expect(reply.text).toContain("JSON")
  })

  it("400 for a malformed path parameter", async () => {
    const reply = await podium.request("POST", "/api/tokens/not-a-uuid/revoke", { token: owner })
    expect(reply.status).toBe(400)
    expect(reply.body.error.details.issues[0].path).toEqual(["params", "token_id"])
  })

  it("413 for a body over the limit", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: JSON.stringify({ name: "x".repeat(17 * 1024 * 1024) }),
      headers: { "content-type": "application/json" }
    })
    expect(reply.status).toBe(413)
    expectErrorBody(reply.body, "payload_too_large")
  })

  it("415 for a body that is not JSON", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(reply.status).toBe(415)
    expectErrorBody(reply.body, "unsupported_media_type")
  })

  it("serves the generated OpenAPI document and the docs page", async () => {
    const spec = await podium.request("GET", "/openapi.json")
    expect(spec.status).toBe(200)
    expect(spec.body.openapi).toMatch(/^3\.1/)
    const docs = await podium.request("GET", "/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(docs.text).not.toMatch(/<script[^>]+src=["']https?:/) // bundled: works offline
    expect(docs.text.length).toBeGreaterThan(1_000_000)
  })
})

/** Sends raw bytes and reads the answer until the server closes or `until` matches. */
const raw = (port: number, bytes: string, until = /\r\n\r\n[\s\S]*\}$/) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes))
    let answer = ""
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8")
      if (until.test(answer)) {
        socket.destroy()
        resolve(answer)
      }
    })
    socket.on("end", () => resolve(answer))
    socket.on("error", reject)
  })
const jsonOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))

describe("hostile input", () => {
  const post = (path: string, body: string) =>
    podium.request("POST", path, { token: owner, body, headers: { "content-type": "application/json" } })
  const issue = (reply: { status: number; body: any }) => {
    expect(reply.status).toBe(400)
    expectErrorBody(reply.body, "validation_failed")
    return reply.body.error.details.issues[0] as { path: Array<string | number>; message: string }
  }

  it("400 naming the path for U+0000 and lone surrogates in any string, keys included", async () => {
    expect(issue(await post("/api/tokens", `{"name":"a\\u0000b"}`)).path).toEqual(["payload", "name"])
    expect(issue(await post("/api/tokens", `{"name":"a\\ud800b"}`)).path).toEqual(["payload", "name"])
    expect(issue(await post("/api/tokens", `{"name":"a\\udc00"}`)).path).toEqual(["payload", "name"])
    expect(issue(await post("/api/leaderboards", `{"name":"x","dataset_type":"PUSH","extra":{"k\\u0000":1}}`)).path)
      .toEqual(["payload", "extra", "k\u0000"])
    // a surrogate pair is one character, and an escaped backslash before "u0000" is not an escape
    const fine = await post("/api/tokens", `{"name":"\\ud83d\\ude00 \\\\u0000","scopes":["leaderboards:read"]}`)
    expect(fine.status).toBe(201)
    expect(fine.body.token.name).toBe("😀 \\u0000")
  })

  it("400 for JSON nested deeper than 32 levels, however deep", async () => {
    for (const depth of [33, 5_000, 200_000]) {
      const reply = await post("/api/leaderboards", `{"name":"x","extra":${"[".repeat(depth)}${"]".repeat(depth)}}`)
      expect(reply.status).toBe(400)
      expectErrorBody(reply.body, "validation_failed")
      expect(reply.body.error.message).toContain("32 levels")
    }
    const shallow = await post("/api/tokens", `{"name":"x","scopes":["leaderboards:read"],"extra":${"[".repeat(30)}${"]".repeat(30)}}`)
    expect(shallow.status).not.toBe(400)
  })

  it("400 for U+0000 or text that is not UTF-8 in the path or query", async () => {
    expect(issue(await podium.request("GET", "/api/leaderboards/%00", { token: owner })).path).toEqual(["params"])
    expect(issue(await podium.request("GET", "/api/leaderboards/%ED%A0%80", { token: owner })).path).toEqual(["params"])
    expect(issue(await podium.request("GET", "/api/leaderboards?q=%00", { token: owner })).path).toEqual(["query", "q"])
    expect(issue(await podium.request("GET", "/api/leaderboards?q=%FF", { token: owner })).path).toEqual(["query", "q"])
  })

  it("a path id that is not a UUID is 400 or 404, never 405", async () => {
    const cases = [
      ["GET", "/api/leaderboards/abc"],
      ["GET", "/api/leaderboards/a%2Fb"],
      ["GET", "/api/leaderboards/a%20b/"],
      ["GET", `/api/leaderboards/${"a".repeat(5_000)}`], // longer than the router matches a parameter
      ["PATCH", "/api/leaderboards/abc"],
      ["POST", "/api/tokens/%F0%9F%98%80/revoke"]
    ] as const
    for (const [method, path] of cases) {
      const reply = await podium.request(method, path, { token: owner, ...(method === "GET" ? {} : { json: {} }) })
      expect([400, 404]).toContain(reply.status)
      expect(reply.body.error.code).toMatch(/validation_failed|not_found/)
      expect(reply.text.length).toBeLessThan(1_000)
    }
  })

  it("415 for a body without a JSON content type", async () => {
    for (const headers of [{ "content-type": "text/plain" }, {}] as Array<Record<string, string>>) {
      const reply = await podium.request("POST", "/api/tokens", { token: owner, body: `{"name":"x"}`, headers })
      expect(reply.status).toBe(415)
      expectErrorBody(reply.body, "unsupported_media_type")
    }
  })

  it("413 for a declared length over the limit, before the body is sent", async () => {
    const port = new URL(podium.url).port
    const answer = await raw(
      Number(port),
      `POST /api/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{`
    )
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    expect(jsonOf(answer).error.code).toBe("payload_too_large")
  })

  it("431 with our error body for headers over Node's limit, 400 for bytes that are not HTTP", async () => {
    const port = Number(new URL(podium.url).port)
    const big = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`)
    expect(big).toMatch(/^HTTP\/1\.1 431/)
    expect(jsonOf(big).error.code).toBe("headers_too_large")
    const junk = await raw(port, "NOT HTTP AT ALL\r\n\r\n")
    expect(junk).toMatch(/^HTTP\/1\.1 400/)
    expect(jsonOf(junk).error.code).toBe("bad_request")
  })
})
