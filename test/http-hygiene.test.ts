import { randomUUID } from "node:crypto"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pushLeaderboard, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

/**
 * What every answer holds to, whoever writes it (the router, its request pipeline, the front door,
 * Node's own refusals): bodies that are not UTF-8 refused, error bodies typed as JSON, nosniff on
 * every answer, and validation paths that say which part of the request failed.
 */
let podium: Podium
let owner: string
let leaderboardId: string

beforeAll(async () => {
  podium = await startPodium()
  const user = await signedIn(podium, "hygiene-owner")
  owner = user.session
  leaderboardId = await pushLeaderboard(user.api)
})
afterAll(() => podium.stop())

interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

/**
 * Sends `body` as these exact bytes. `chunked` leaves out Content-Length, so the front door
 * declines the request and the router answers it.
 */
const sendBytes = (path: string, body: Uint8Array, options: { token?: string; chunked?: boolean } = {}) =>
  new Promise<RawReply>((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
    if (options.chunked !== true) headers["content-length"] = String(body.length)
    const request = httpRequest(`${podium.url}${path}`, { method: "POST", headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        resolve({ status: response.statusCode!, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) })
      })
    })
    request.on("error", reject)
    request.end(Buffer.from(body))
  })

const bytes = (...parts: Array<string | ReadonlyArray<number> | Uint8Array>) =>
  Buffer.concat(parts.map((part) => typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part as Uint8Array)))

/** Byte sequences no UTF-8 decoder may accept, each inside a JSON string or at the very end. */
const notUtf8: ReadonlyArray<readonly [string, (json: (inner: ReadonlyArray<number>) => Uint8Array) => Uint8Array]> = [
  ["a lead byte with no continuation (0xC3 0x28)", (json) => json([0xc3, 0x28])],
  ["a lone 0xFF", (json) => json([0xff])],
  ["an overlong encoding of '/' (0xC0 0xAF)", (json) => json([0xc0, 0xaf])],
  ["a surrogate encoded as UTF-8 (0xED 0xA0 0x80)", (json) => json([0xed, 0xa0, 0x80])],
  ["a multi-byte sequence cut at the end of the body", (json) => bytes(json([]), [0xe2, 0x82])]
]

const expectInvalidJson = (reply: RawReply, where: string) => {
  expect(reply.status, where).toBe(400)
  expect(reply.body?.error?.code, where).toBe("invalid_json")
  expect(reply.body.error.message, where).toContain("UTF-8")
  expect(reply.headers["content-type"], where).toMatch(/^application\/json/)
}

describe("a JSON body that is not UTF-8", () => {
  it("is 400 invalid_json on a leaderboard create, and nothing is stored", async () => {
    for (const [name, body] of notUtf8) {
      const reply = await sendBytes("/api/leaderboards", body((inner) => bytes(`{"name":"x`, inner, `","dataset_type":"PUSH"}`)), {
        token: owner
      })
      expectInvalidJson(reply, name)
    }
    const listed = await podium.request("GET", "/api/leaderboards", { token: owner })
    expect(listed.text).not.toContain("\uFFFD")
    expect(listed.text).not.toContain("\\ufffd")
  })

  it("is 400 invalid_json on leaderboard and model inference, at the front door and at the router", async () => {
    for (const path of [`/v1/leaderboard/${randomUUID()}/inference`, `/v1/models/${randomUUID()}/inference`]) {
      for (const chunked of [false, true]) {
        for (const [name, body] of notUtf8) {
          const reply = await sendBytes(path, body((inner) => bytes(`{"messages":[{"role":"user","content":"hi`, inner, `"}]}`)), {
            token: owner,
            chunked
          })
          expectInvalidJson(reply, `${path} ${chunked ? "router" : "front door"}: ${name}`)
        }
      }
    }
  })

  it("is 400 invalid_json on a dataset push (the whole body, not a row of it)", async () => {
    for (const [name, body] of notUtf8) {
      const reply = await sendBytes(
        `/v1/leaderboard/${leaderboardId}/dataset/push`,
        body((inner) => bytes(`[{"input":"q`, inner, `","expected":"a"}]`)),
        { token: owner }
      )
      expectInvalidJson(reply, name)
    }
    const status = await podium.request("GET", `/v1/leaderboard/${leaderboardId}/dataset/status`, { token: owner })
    expect(status.text).not.toContain("\uFFFD")
  })

  it("valid UTF-8 of every length still goes through", async () => {
    const name = "Ünïcødé ✓ 😀"
    const reply = await sendBytes("/api/leaderboards", bytes(`{"name":"${name}","dataset_type":"PUSH"}`), { token: owner })
    expect(reply.status).toBe(201)
    expect(reply.body.leaderboard.name).toBe(name)
  })
})

const isJson = (contentType: string | null | undefined) => /^application\/json(;|$)/.test(contentType ?? "")

/** One exchange on a raw socket: what the server wrote until it closed the connection. */
const raw = (text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(podium.url).port), "127.0.0.1", () => socket.write(text))
    let answer = ""
    socket.on("data", (chunk) => answer += chunk.toString("latin1"))
    socket.on("end", () => resolve(answer))
    socket.on("error", reject)
  })

const headerOf = (answer: string, name: string) =>
  answer.split("\r\n\r\n")[0]!.split("\r\n").find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim()

describe("error bodies are typed application/json", () => {
  it("400, 401, 404, 405, 413 and 415 from the router and the front door", async () => {
    const replies = {
      "415 text/plain": await podium.request("POST", "/api/tokens", { token: owner, body: `{"name":"x"}`, headers: { "content-type": "text/plain" } }),
      "415 no content type": await podium.request("POST", "/api/tokens", { token: owner, body: `{"name":"x"}` }),
      "413": await podium.request("POST", "/api/tokens", {
        token: owner,
        body: `{"name":"${"x".repeat(17 * 1024 * 1024)}"}`,
        headers: { "content-type": "application/json" }
      }),
      "404": await podium.request("GET", "/api/nothing-here"),
      "405": await podium.request("PUT", "/api/tokens"),
      "400 validation": await podium.request("POST", "/api/tokens", { token: owner, json: { name: "" } }),
      "400 malformed JSON": await podium.request("POST", "/api/tokens", {
        token: owner,
        body: "{",
        headers: { "content-type": "application/json" }
      }),
      "401 router": await podium.request("GET", "/api/tokens"),
      "401 front door": await podium.request("POST", `/v1/leaderboard/${randomUUID()}/inference`, { json: { input: "hi" } }),
      "400 front door": await podium.request("POST", `/v1/leaderboard/${randomUUID()}/inference`, {
        body: `{"input":"a\\u0000"}`,
        headers: { "content-type": "application/json" }
      })
    }
    for (const [name, reply] of Object.entries(replies)) {
      expect(reply.status, name).toBe(Number(name.slice(0, 3)))
      expect(reply.body?.error?.code, name).toEqual(expect.any(String))
      expect(reply.headers.get("content-type"), name).toSatisfy(isJson)
    }
  })

  it("Node's own refusals (413 from the declared length, 431, 400 for bytes that are not HTTP)", async () => {
    const answers = [
      await raw(`POST /api/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{`),
      await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}\r\n\r\n`),
      await raw("NOT HTTP AT ALL\r\n\r\n")
    ]
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d/)
      expect(headerOf(answer, "content-type"), answer.slice(0, 40)).toSatisfy(isJson)
      expect(headerOf(answer, "x-content-type-options"), answer.slice(0, 40)).toBe("nosniff")
    }
  })
})

describe("X-Content-Type-Options: nosniff", () => {
  it("on JSON answers and errors of the router, the front door and the documents", async () => {
    const replies = {
      "router 200": await podium.request("GET", "/healthz"),
      "router 201": await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "sniff", dataset_type: "PUSH" } }),
      "router 404": await podium.request("GET", "/api/nothing-here"),
      "router 401": await podium.request("GET", "/api/tokens"),
      "router 400": await podium.request("POST", "/api/tokens", { token: owner, json: { name: "" } }),
      "openapi": await podium.request("GET", "/openapi.json"),
      "front door 401": await podium.request("POST", `/v1/leaderboard/${randomUUID()}/inference`, { json: { input: "hi" } }),
      "front door 404": await podium.request("POST", `/v1/leaderboard/${randomUUID()}/inference`, { token: owner, json: { input: "hi" } }),
      "front door export 200": await podium.request("GET", `/v1/leaderboard/${leaderboardId}/traces?format=jsonl`, { token: owner }),
      "front door export 401": await podium.request("GET", `/v1/leaderboard/${leaderboardId}/traces?format=jsonl`)
    }
    for (const [name, reply] of Object.entries(replies)) {
      expect(reply.headers.get("x-content-type-options"), `${name} (${reply.status})`).toBe("nosniff")
    }
  })
})

describe("validation issue paths name the part of the request", () => {
  const issues = (reply: { status: number; body: any }) => {
    expect(reply.status).toBe(400)
    expect(reply.body.error.code).toBe("validation_failed")
    return reply.body.error.details.issues as Array<{ path: Array<string | number> }>
  }
  const parts = ["payload", "query", "params", "headers"]

  it("a rule the use case checks is under payload", async () => {
    const refused = issues(await podium.request("POST", "/api/leaderboards", {
      token: owner,
      json: { name: "x", dataset_type: "GET", dataset_url: "ftp://example.com/data.jsonl" }
    }))
    expect(refused[0]!.path).toEqual(["payload", "dataset_url"])
    const running = issues(await podium.request("PATCH", `/api/leaderboards/${leaderboardId}`, { token: owner, json: { status: "running" } }))
    expect(running[0]!.path).toEqual(["payload", "status"])
  })

  it("a path that is not percent-encoded UTF-8, or holds U+0000, is under params", async () => {
    for (const path of ["/api/leaderboards/%00", "/api/leaderboards/%ED%A0%80", "/api/leaderboards/%FF"]) {
      expect(issues(await podium.request("GET", path, { token: owner }))[0]!.path, path).toEqual(["params"])
    }
  })

  it("every issue of a mixed bag of bad requests starts with a part's name", async () => {
    const replies = [
      await podium.request("POST", "/api/tokens", { token: owner, json: { name: "", scopes: ["root"], expires_in: "2d" } }),
      await podium.request("POST", "/api/tokens/not-a-uuid/revoke", { token: owner }),
      await podium.request("GET", "/api/leaderboards?q=%00", { token: owner }),
      await podium.request("GET", `/v1/leaderboard/${leaderboardId}/traces?limit=0`, { token: owner }),
      await podium.request("POST", "/api/tokens", { token: owner, body: "{", headers: { "content-type": "application/json" } }),
      await podium.request("POST", `/v1/leaderboard/${randomUUID()}/inference`, { token: owner, json: { temperature: "hot" } })
    ]
    for (const reply of replies) {
      for (const issue of issues(reply)) expect(parts, JSON.stringify(issue)).toContain(issue.path[0])
    }
  })
})
