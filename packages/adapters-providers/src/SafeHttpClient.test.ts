import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient } from "effect/http"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createTlsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { getCACertificates, setDefaultCACertificates, type TLSSocket } from "node:tls"
import { gzipSync } from "node:zlib"
import { createRemoteJWKSet, customFetch, exportJWK, generateKeyPair, SignJWT, jwtVerify } from "jose"
import { isBlockedAddress } from "./AddressPolicy.ts"
import { makeSafeDispatcher, type Resolver, SafeHttp, SafeHttpError, type SafeHttpOptions, safeFetch } from "./SafeHttpClient.ts"

// Every address here is loopback. 127.0.0.2 stands in for "the public internet": the tests
// allow exactly that address, while 127.0.0.1 and every other range stay blocked.

interface FakeOrigin {
  readonly server: Server
  readonly port: number
  readonly hosts: Array<string>
  connections: number
}

const handle = (origin: () => FakeOrigin) => (request: IncomingMessage, response: ServerResponse) => {
  origin().hosts.push(request.headers.host ?? "")
  const url = new URL(request.url ?? "/", "http://fake")
  const hops = /^\/hops\/(\d+)$/.exec(url.pathname)
  if (url.pathname === "/ok") return response.end("hello")
  if (url.pathname === "/authorization") return response.end(request.headers.authorization ?? "none")
  if (url.pathname === "/jwks") return response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks))
  if (url.pathname === "/big") return response.end("x".repeat(2048))
  if (url.pathname === "/big-chunked") {
    response.write("x".repeat(1000))
    return setTimeout(() => response.end("x".repeat(1048)), 10)
  }
  if (url.pathname === "/gzip") {
    response.writeHead(200, { "content-encoding": "gzip" })
    return response.end(gzipSync(Buffer.alloc(100_000)))
  }
  if (url.pathname === "/slow") return
  if (url.pathname === "/drip") {
    response.writeHead(200, { "content-type": "text/plain" })
    const timer = setInterval(() => response.write("."), 20)
    return response.on("close", () => clearInterval(timer))
  }
  if (url.pathname === "/redirect") {
    response.writeHead(302, { location: url.searchParams.get("to") ?? "/" })
    return response.end()
  }
  if (hops) {
    const left = Number(hops[1])
    response.writeHead(left === 0 ? 200 : 302, left === 0 ? {} : { location: `/hops/${left - 1}` })
    return response.end(left === 0 ? "arrived" : "")
  }
  response.writeHead(404).end()
}

const listen = (host: string) =>
  new Promise<FakeOrigin>((resolve) => {
    let origin: FakeOrigin
    const server = createServer(handle(() => origin))
    server.on("connection", () => origin.connections++)
    server.listen(0, host, () => {
      origin = { server, port: (server.address() as AddressInfo).port, hosts: [], connections: 0 }
      resolve(origin)
    })
  })

let jwks: unknown = { keys: [] }
let local: FakeOrigin // 127.0.0.1: must never be reached with the guard on
let remote: FakeOrigin // 127.0.0.2: treated as public

beforeAll(async () => {
  local = await listen("127.0.0.1")
  remote = await listen("127.0.0.2")
})

afterAll(async () => {
  for (const { server } of [local, remote]) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const zones: Record<string, ReadonlyArray<string>> = {
  "public.test": ["127.0.0.2"],
  "evil.test": ["127.0.0.1"],
  "mixed.test": ["127.0.0.2", "127.0.0.1"],
  "metadata.test": ["169.254.169.254"]
}
const fakeDns: Resolver = async (hostname) => {
  const answers = zones[hostname]
  if (answers === undefined) throw Object.assign(new Error(`fake DNS: ${hostname} not found`), { code: "ENOTFOUND" })
  return answers.map((address) => ({ address, family: 4 }))
}

const guarded: SafeHttpOptions = {
  allowPrivateNetwork: false,
  resolve: fakeDns,
  isBlocked: (address) => address !== "127.0.0.2" && isBlockedAddress(address)
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(() => assert.fail("expected the request to fail"), (error: unknown) => error)

const assertRefused = async (promise: Promise<unknown>, reason: SafeHttpError["reason"]) => {
  const error = await rejection(promise)
  assert.instanceOf(error, SafeHttpError, String(error))
  assert.strictEqual(error.reason, reason)
}

describe("safeFetch with the guard on", () => {
  const fetch = safeFetch(guarded)
  const remoteUrl = (path: string) => `http://public.test:${remote.port}${path}`

  it("refuses IP-literal URLs into blocked ranges without connecting", async () => {
    const before = local.connections
    for (
      const url of [
        `http://127.0.0.1:${local.port}/ok`,
        `http://[::1]:${local.port}/ok`,
        `http://[::ffff:127.0.0.1]:${local.port}/ok`,
        `http://2130706433:${local.port}/ok`,
        `http://0x7f000001:${local.port}/ok`,
        `http://127.1:${local.port}/ok`,
        `http://0.0.0.0:${local.port}/ok`,
        `http://169.254.169.254:${local.port}/latest/meta-data/`
      ]
    ) await assertRefused(fetch(url), "BlockedAddress")
    assert.strictEqual(local.connections, before)
  })

  it("refuses host names whose DNS answer is blocked, even in part", async () => {
    await assertRefused(fetch(`http://evil.test:${local.port}/ok`), "BlockedAddress")
    await assertRefused(fetch(`http://mixed.test:${remote.port}/ok`), "BlockedAddress")
    await assertRefused(fetch(`http://metadata.test:${remote.port}/ok`), "BlockedAddress")
  })

  it("uses the real address policy by default", async () => {
    await assertRefused(safeFetch({ allowPrivateNetwork: false, resolve: fakeDns })(remoteUrl("/ok")), "BlockedAddress")
    await assertRefused(safeFetch({ allowPrivateNetwork: false })(`http://localhost:${local.port}/ok`), "BlockedAddress")
  })

  it("connects to the checked address and keeps the original host name", async () => {
    const response = await fetch(remoteUrl("/ok"))
    assert.strictEqual(await response.text(), "hello")
    assert.strictEqual(remote.hosts.at(-1), `public.test:${remote.port}`)
  })

  it("resolves once per connection, so a changed DNS answer cannot move it", async () => {
    let lookups = 0
    const rebinding: Resolver = async () => [{ address: lookups++ === 0 ? "127.0.0.2" : "127.0.0.1", family: 4 }]
    const before = local.hosts.length
    const response = await safeFetch({ ...guarded, resolve: rebinding })(`http://rebind.test:${remote.port}/ok`)
    assert.strictEqual(await response.text(), "hello")
    assert.strictEqual(lookups, 1)
    assert.strictEqual(local.hosts.length, before)
  })

  it("re-checks every redirect hop", async () => {
    for (
      const target of [
        `http://127.0.0.1:${local.port}/ok`,
        `http://evil.test:${local.port}/ok`,
        `http://[::1]:${local.port}/ok`
      ]
    ) await assertRefused(fetch(remoteUrl(`/redirect?to=${encodeURIComponent(target)}`)), "BlockedAddress")
    const allowed = await fetch(remoteUrl(`/redirect?to=${encodeURIComponent(`http://127.0.0.2:${remote.port}/ok`)}`))
    assert.strictEqual(allowed.status, 200)
    assert.strictEqual(await allowed.text(), "hello")
  })

  it("drops credentials when a redirect leaves the origin", async () => {
    const init = { headers: { authorization: "Bearer secret" } }
    const sameOrigin = await fetch(remoteUrl("/redirect?to=/authorization"), init)
    assert.strictEqual(await sameOrigin.text(), "Bearer secret")
    const target = encodeURIComponent(`http://127.0.0.2:${remote.port}/authorization`)
    const crossOrigin = await fetch(remoteUrl(`/redirect?to=${target}`), init)
    assert.strictEqual(await crossOrigin.text(), "none")
  })

  it("follows at most maxRedirects hops", async () => {
    const five = await fetch(remoteUrl("/hops/5"))
    assert.strictEqual(await five.text(), "arrived")
    const error = await rejection(fetch(remoteUrl("/hops/6")))
    assert.instanceOf(error, TypeError)
    assert.strictEqual((error.cause as { code?: string }).code, "UND_ERR_REDIRECT_MAX")
  })

  it("hands redirects back unfollowed when maxRedirects is 0 or the caller asks for manual", async () => {
    const unfollowed = safeFetch({ ...guarded, maxRedirects: 0 })
    const target = encodeURIComponent(`http://127.0.0.1:${local.port}/ok`)
    for (const response of [await unfollowed(remoteUrl(`/redirect?to=${target}`)), await fetch(remoteUrl(`/redirect?to=${target}`), { redirect: "manual" })]) {
      assert.strictEqual(response.status, 302)
      assert.strictEqual(response.headers.get("location"), `http://127.0.0.1:${local.port}/ok`)
    }
  })

  it("keeps connections alive between requests", async () => {
    const pooled = safeFetch(guarded)
    const before = remote.connections
    for (let i = 0; i < 10; i++) await (await pooled(remoteUrl("/ok"))).text()
    assert.isAtMost(remote.connections - before, 2)
  })
})

describe("safeFetch over TLS", () => {
  it("connects to the checked address but verifies and names the original host", async () => {
    const dir = mkdtempSync(join(tmpdir(), "safe-http-"))
    const defaultCAs = getCACertificates("default")
    try {
      execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
        "-subj", "/CN=public.test", "-addext", "subjectAltName=DNS:public.test",
        "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")
      ], { stdio: "ignore" })
      const cert = readFileSync(join(dir, "cert.pem"), "utf8")
      const servernames: Array<string | false | null> = []
      const server = createTlsServer({ key: readFileSync(join(dir, "key.pem")), cert }, (request, response) => {
        servernames.push((request.socket as TLSSocket).servername)
        response.end("secure hello")
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve))
      setDefaultCACertificates([...defaultCAs, cert])
      try {
        const { port } = server.address() as AddressInfo
        const response = await safeFetch(guarded)(`https://public.test:${port}/`)
        assert.strictEqual(await response.text(), "secure hello")
        assert.deepStrictEqual(servernames, ["public.test"])
        const error = await rejection(safeFetch(guarded)(`https://127.0.0.2:${port}/`))
        assert.match(String((error as Error).cause), /altnames|IP: 127\.0\.0\.2/)
      } finally {
        server.closeAllConnections()
        server.close()
      }
    } finally {
      setDefaultCACertificates(defaultCAs)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("safeFetch limits", () => {
  const small = safeFetch({ ...guarded, maxResponseBytes: 1024 })
  const remoteUrl = (path: string) => `http://public.test:${remote.port}${path}`

  it("refuses a body whose declared length is over the limit", async () => {
    await assertRefused(small(remoteUrl("/big")), "ResponseTooLarge")
    assert.strictEqual((await small(remoteUrl("/big"), { method: "HEAD" })).status, 200)
  })

  it("cuts off a streamed body once it passes the limit", async () => {
    const response = await small(remoteUrl("/big-chunked"))
    await assertRefused(response.text(), "ResponseTooLarge")
  })

  it("counts the decompressed size", async () => {
    const response = await small(remoteUrl("/gzip"))
    await assertRefused(response.arrayBuffer(), "ResponseTooLarge")
  })

  it("times out a server that never answers", async () => {
    const started = Date.now()
    await assertRefused(safeFetch({ ...guarded, requestTimeoutMs: 200 })(remoteUrl("/slow")), "Timeout")
    assert.isBelow(Date.now() - started, 2_000)
  })

  it("bounds the whole exchange, not just the gaps between chunks", async () => {
    const response = await safeFetch({ ...guarded, requestTimeoutMs: 300 })(remoteUrl("/drip"))
    await assertRefused(response.text(), "Timeout")
  })

  it("bounds name resolution by the connect timeout", async () => {
    const hanging = safeFetch({ ...guarded, connectTimeoutMs: 100, resolve: () => new Promise(() => {}) })
    await assertRefused(hanging(remoteUrl("/ok")), "Timeout")
  })
})

describe("allowPrivateNetwork", () => {
  it("reaches loopback directly", async () => {
    const open = safeFetch({ allowPrivateNetwork: true })
    assert.strictEqual(await (await open(`http://127.0.0.1:${local.port}/ok`)).text(), "hello")
    assert.strictEqual(await (await open(`http://localhost:${local.port}/ok`)).text(), "hello")
  })

  it("still applies the limits", async () => {
    const open = safeFetch({ allowPrivateNetwork: true, maxResponseBytes: 1024 })
    await assertRefused(open(`http://127.0.0.1:${local.port}/big`), "ResponseTooLarge")
  })
})

describe("makeSafeDispatcher", () => {
  it("guards plain undici fetch given the dispatcher, redirects included", async () => {
    const { fetch } = await import("undici")
    const dispatcher = makeSafeDispatcher(guarded)
    try {
      const error = await rejection(fetch(`http://127.0.0.1:${local.port}/ok`, { dispatcher }))
      assert.instanceOf((error as Error).cause, SafeHttpError)
      const target = encodeURIComponent(`http://127.0.0.1:${local.port}/ok`)
      const redirected = await rejection(fetch(`http://public.test:${remote.port}/redirect?to=${target}`, { dispatcher }))
      assert.instanceOf((redirected as Error).cause, SafeHttpError)
    } finally {
      await dispatcher.destroy()
    }
  })
})

describe("jose over safeFetch", () => {
  it("fetches a JWKS from a public host and refuses one on a blocked host", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256")
    jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" }] }
    const token = await new SignJWT({ sub: "ada" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(privateKey)
    const keySet = (url: string) => createRemoteJWKSet(new URL(url), { [customFetch]: safeFetch(guarded) })

    const { payload } = await jwtVerify(token, keySet(`http://public.test:${remote.port}/jwks`))
    assert.strictEqual(payload.sub, "ada")
    const error = await rejection(jwtVerify(token, keySet(`http://127.0.0.1:${local.port}/jwks`)))
    assert.instanceOf(error, SafeHttpError)
  })
})

describe("SafeHttp.layer", () => {
  it.effect("gives Effect's HttpClient the same guard", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const blocked = yield* client.get(`http://127.0.0.1:${local.port}/ok`).pipe(Effect.flip)
      assert.strictEqual(blocked.reason._tag, "TransportError")
      assert.instanceOf(blocked.reason.cause, SafeHttpError)

      const redirected = yield* client.get(
        `http://public.test:${remote.port}/redirect?to=${encodeURIComponent(`http://evil.test:${local.port}/ok`)}`
      ).pipe(Effect.flip)
      assert.instanceOf(redirected.reason.cause, SafeHttpError)

      const ok = yield* client.get(`http://public.test:${remote.port}/hops/2`)
      assert.strictEqual(yield* ok.text, "arrived")
    }).pipe(Effect.provide(SafeHttp.layer(guarded))))

  it.effect("applies the size limit and timeout to Effect's HttpClient", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const tooBig = yield* client.get(`http://public.test:${remote.port}/big`).pipe(Effect.flip)
      assert.strictEqual((tooBig.reason.cause as SafeHttpError).reason, "ResponseTooLarge")
      const slow = yield* client.get(`http://public.test:${remote.port}/slow`).pipe(Effect.flip)
      assert.strictEqual((slow.reason.cause as SafeHttpError).reason, "Timeout")
    }).pipe(Effect.provide(SafeHttp.layer({ ...guarded, maxResponseBytes: 1024, requestTimeoutMs: 300 }))))

  it.effect("exposes the guarded fetch for code outside Effect", () =>
    Effect.gen(function*() {
      const { fetch } = yield* SafeHttp
      const error = yield* Effect.promise(() => rejection(fetch(`http://127.0.0.1:${local.port}/ok`)))
      assert.instanceOf(error, SafeHttpError)
    }).pipe(Effect.provide(SafeHttp.layer(guarded))))
})
