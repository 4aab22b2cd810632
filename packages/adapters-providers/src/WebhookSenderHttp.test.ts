import { assert, describe, it } from "@effect/vitest"
import { type SendResult, WebhookSender } from "@podium/domain/models"
import { DateTime, type Duration, Effect, Layer } from "effect"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import { type Resolver, SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"
import { sign, WebhookSenderHttp } from "./WebhookSenderHttp.ts"

// The receiver listens on 127.0.0.1. `receiver.test` resolves there through the pool's resolver,
// so the address guard is exercised after DNS, and no lookup leaves the machine.

interface Delivery {
  readonly method: string | undefined
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}
const deliveries: Array<Delivery> = []
const deliveredTo = (path: string) => deliveries.filter((_) => _.path === path)

const receive = (request: IncomingMessage, response: ServerResponse) => {
  let body = ""
  request.setEncoding("utf8")
  request.on("data", (chunk: string) => body += chunk)
  request.on("end", () => {
    const path = request.url ?? ""
    deliveries.push({ method: request.method, path, headers: request.headers, body })
    switch (path) {
      case "/hooks/ok":
        return response.writeHead(204).end()
      case "/hooks/fail":
        return response.writeHead(500, { "content-type": "text/plain" }).end("receiver crashed")
      case "/hooks/moved":
        return response.writeHead(302, { location: "/hooks/landing" }).end()
      case "/hooks/landing":
        return response.writeHead(200).end("landed")
      case "/hooks/large":
        // announces more than any pool would read, sends a little, then never finishes
        return response.writeHead(200, { "content-length": String(64 * 1024 * 1024) }).write("x".repeat(1024))
      case "/hooks/endless": {
        response.writeHead(200, { "content-type": "text/plain" })
        const timer = setInterval(() => response.write("x".repeat(1024)), 5)
        return response.on("close", () => clearInterval(timer))
      }
      case "/hooks/silent":
        return
      default:
        return response.writeHead(404).end()
    }
  })
}

const receiver = loopbackServer(receive)
const port = () => new URL(receiver.url()).port

const fakeDns: Resolver = async (hostname) => {
  if (hostname === "receiver.test") return [{ address: "127.0.0.1", family: 4 }]
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname })
}

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const BODY = JSON.stringify({ type: "model.inference", timestamp: "2026-11-23T16:00:00.000Z", data: { log_id: "log_1" } })

const senderLayer = (options: { readonly allowPrivateNetwork?: boolean; readonly timeout?: Duration.Input } = {}) =>
  WebhookSenderHttp.layer(options.timeout === undefined ? {} : { timeout: options.timeout }).pipe(
    Layer.provide(SafeHttp.layer({ allowPrivateNetwork: options.allowPrivateNetwork ?? true, resolve: fakeDns }))
  )

const send = (
  url: string,
  options: { readonly allowPrivateNetwork?: boolean; readonly timeout?: Duration.Input; readonly messageId?: string } = {}
) =>
  Effect.gen(function*() {
    const timestamp = yield* DateTime.now
    const sender = yield* WebhookSender
    return yield* sender.send({ url, secret: SECRET, messageId: options.messageId ?? "msg_1", timestamp, body: BODY })
  }).pipe(Effect.provide(senderLayer(options)))

const signatureHeaders = (headers: IncomingHttpHeaders): Record<string, string> => ({
  "webhook-id": String(headers["webhook-id"]),
  "webhook-timestamp": String(headers["webhook-timestamp"]),
  "webhook-signature": String(headers["webhook-signature"])
})

const notSent = (result: SendResult): string => {
  assert.strictEqual(result._tag, "NotSent", JSON.stringify(result))
  if (result._tag !== "NotSent") throw new Error("unreachable")
  assert.notInclude(result.reason, SECRET.slice("whsec_".length, 20))
  return result.reason
}

describe("sign", () => {
  it("reproduces the Standard Webhooks specification's test vector", () => {
    assert.strictEqual(
      sign(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, "{\"test\": 2432232314}"),
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )
  })

  it("agrees with the standardwebhooks library for any message", () => {
    const now = new Date()
    for (const body of ["", "{}", BODY, "{\"emoji\":\"🎉 é\"}", "x".repeat(10_000)]) {
      const messageId = `msg_${body.length}`
      const signature = sign(SECRET, messageId, Math.floor(now.getTime() / 1000), body)
      assert.strictEqual(signature, new Webhook(SECRET).sign(messageId, now, body))
      new Webhook(SECRET).verify(body, {
        "webhook-id": messageId,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signature
      }, { jsonParse: false })
    }
  })
})

describe("WebhookSenderHttp", () => {
  it.live("delivers a POST that the standardwebhooks library verifies", () =>
    Effect.gen(function*() {
      const result = yield* send(`http://receiver.test:${port()}/hooks/ok`, { messageId: "msg_delivered" })
      assert.deepStrictEqual(result, { _tag: "Answered", status: 204 })

      const [delivery] = deliveredTo("/hooks/ok").filter((_) => _.headers["webhook-id"] === "msg_delivered")
      assert.isDefined(delivery)
      assert.strictEqual(delivery.method, "POST")
      assert.strictEqual(delivery.body, BODY)
      assert.strictEqual(delivery.headers["content-type"], "application/json")
      assert.include(String(delivery.headers["user-agent"]), "Podium")
      assert.match(String(delivery.headers["webhook-timestamp"]), /^\d{10}$/)
      assert.isAtMost(Math.abs(Number(delivery.headers["webhook-timestamp"]) - Date.now() / 1000), 5)
      assert.match(String(delivery.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]{43}=$/)
      assert.deepStrictEqual(new Webhook(SECRET).verify(delivery.body, signatureHeaders(delivery.headers)), JSON.parse(BODY))
    }))

  it.live("a tampered body or another secret fails verification", () =>
    Effect.gen(function*() {
      yield* send(`http://receiver.test:${port()}/hooks/ok`, { messageId: "msg_tampered" })
      const [delivery] = deliveredTo("/hooks/ok").filter((_) => _.headers["webhook-id"] === "msg_tampered")
      assert.isDefined(delivery)
      const headers = signatureHeaders(delivery.headers)
      assert.throws(() => new Webhook(SECRET).verify(delivery.body.replace("log_1", "log_2"), headers), WebhookVerificationError)
      const other = yield* WebhookSender.use((_) => _.newSecret).pipe(Effect.provide(senderLayer()))
      assert.throws(() => new Webhook(other).verify(delivery.body, headers), WebhookVerificationError)
      assert.throws(
        () => new Webhook(SECRET).verify(delivery.body, { ...headers, "webhook-id": "msg_other" }),
        WebhookVerificationError
      )
    }))

  it.live("a receiver's error is an answer", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* send(`http://receiver.test:${port()}/hooks/fail`), { _tag: "Answered", status: 500 })
    }))

  it.live("a redirect is an answer, never followed", () =>
    Effect.gen(function*() {
      const result = yield* send(`http://receiver.test:${port()}/hooks/moved`)
      assert.deepStrictEqual(result, { _tag: "Answered", status: 302 })
      assert.lengthOf(deliveredTo("/hooks/moved"), 1)
      yield* Effect.sleep("100 millis")
      assert.lengthOf(deliveredTo("/hooks/landing"), 0)
    }))

  it.live("reads no more of a long answer than it needs for the status", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const large = yield* send(`http://receiver.test:${port()}/hooks/large`, { timeout: "5 seconds" })
      assert.deepStrictEqual(large, { _tag: "Answered", status: 200 })
      const endless = yield* send(`http://receiver.test:${port()}/hooks/endless`, { timeout: "5 seconds" })
      assert.deepStrictEqual(endless, { _tag: "Answered", status: 200 })
      assert.isBelow(Date.now() - started, 2_000)
    }))

  it.live("a loopback receiver is refused unless private targets are allowed, after DNS too", () =>
    Effect.gen(function*() {
      const before = deliveries.length
      for (const url of [`http://receiver.test:${port()}/hooks/ok`, `${receiver.url()}/hooks/ok`]) {
        const reason = notSent(yield* send(url, { allowPrivateNetwork: false }))
        assert.include(reason, "127.0.0.1 is not a public address")
        assert.include(reason, "ALLOW_PRIVATE_NETWORK_TARGETS=true")
      }
      assert.strictEqual(deliveries.length, before)
    }))

  it.live("a silent receiver is given up on within the timeout", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const reason = notSent(yield* send(`http://receiver.test:${port()}/hooks/silent`, { timeout: "300 millis" }))
      const elapsed = Date.now() - started
      assert.strictEqual(reason, `receiver.test:${port()} did not answer within 0.3 s`)
      assert.isAtLeast(elapsed, 250)
      assert.isBelow(elapsed, 1_500)
    }))

  it.live("an unresolvable host, a closed port or a bad URL is not sent", () =>
    Effect.gen(function*() {
      assert.strictEqual(notSent(yield* send("https://nowhere.test/hooks")), "could not resolve nowhere.test")
      assert.strictEqual(notSent(yield* send("http://127.0.0.1:1/hooks")), "127.0.0.1:1 refused the connection")
      assert.strictEqual(notSent(yield* send("ftp://receiver.test/hooks")), "the webhook URL is not an http(s) URL")
      assert.strictEqual(notSent(yield* send("not a url")), "the webhook URL is not an http(s) URL")
    }))

  it.live("sends many at once, each on its own: results in order, a silent receiver holds only its own", () =>
    Effect.gen(function*() {
      const timestamp = yield* DateTime.now
      const message = (path: string, messageId: string) => ({ url: `http://receiver.test:${port()}${path}`, secret: SECRET, messageId, timestamp, body: BODY })
      const started = Date.now()
      const results = yield* WebhookSender.use((sender) =>
        sender.sendAll([
          message("/hooks/silent", "msg_all_0"),
          message("/hooks/ok", "msg_all_1"),
          message("/hooks/fail", "msg_all_2"),
          { ...message("/hooks/ok", "msg_all_3"), url: "not a url" },
          message("/hooks/ok", "msg_all_4")
        ])
      ).pipe(Effect.provide(senderLayer({ timeout: "300 millis" })))
      assert.isBelow(Date.now() - started, 1_500)
      assert.deepStrictEqual(results, [
        { _tag: "NotSent", reason: `receiver.test:${port()} did not answer within 0.3 s` },
        { _tag: "Answered", status: 204 },
        { _tag: "Answered", status: 500 },
        { _tag: "NotSent", reason: "the webhook URL is not an http(s) URL" },
        { _tag: "Answered", status: 204 }
      ])
      for (const id of ["msg_all_1", "msg_all_4"]) {
        const [delivery] = deliveredTo("/hooks/ok").filter((_) => _.headers["webhook-id"] === id)
        assert.isDefined(delivery)
        new Webhook(SECRET).verify(delivery.body, signatureHeaders(delivery.headers))
      }
      assert.deepStrictEqual(yield* WebhookSender.use((sender) => sender.sendAll([])).pipe(Effect.provide(senderLayer())), [])
    }))

  it.effect("makes a new 24-byte whsec_ secret each time", () =>
    Effect.gen(function*() {
      const sender = yield* WebhookSender
      const first = yield* sender.newSecret
      const second = yield* sender.newSecret
      assert.match(first, /^whsec_[A-Za-z0-9+/]{32}$/)
      assert.strictEqual(Buffer.from(first.slice("whsec_".length), "base64").length, 24)
      assert.notStrictEqual(first, second)
      assert.doesNotThrow(() => new Webhook(first))
    }).pipe(Effect.provide(senderLayer())))
})
