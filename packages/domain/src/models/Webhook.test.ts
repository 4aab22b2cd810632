import { DateTime, Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { deliveryOutcome, maxDeliveryAttempts, undeliverable, webhookTarget } from "./Webhook.ts"

describe("webhookTarget", () => {
  it("accepts https URLs, and plain http only when private targets are allowed", () => {
    expect(webhookTarget("https://hooks.example.com/podium?x=1", false)).toEqual(Result.succeed("https://hooks.example.com/podium?x=1"))
    expect(Result.isFailure(webhookTarget("http://hooks.example.com/podium", false))).toBe(true)
    expect(webhookTarget("http://127.0.0.1:9000/hook", true)).toEqual(Result.succeed("http://127.0.0.1:9000/hook"))
  })

  it("refuses credentials, other schemes, fragments and non-URLs, naming webhook_url", () => {
    for (const bad of ["https://user:pass@example.com/", "https://user@example.com/", "ftp://example.com/", "https://example.com/#x", "example.com"]) {
      const refused = webhookTarget(bad, true)
      expect(Result.isFailure(refused) && refused.failure.path).toEqual(["webhook_url"])
    }
  })

  it("reads empty and null as none", () => {
    for (const none of ["", "   ", null, undefined]) expect(webhookTarget(none, false)).toEqual(Result.succeed(null))
  })
})

describe("deliveryOutcome", () => {
  const now = DateTime.makeUnsafe("2026-01-01T00:00:00Z")
  const base = Duration.seconds(10)
  const entry = (attempts: number) => ({ log_id: "log-1", attempts })

  it("a 2xx answer is delivered, with the attempt counted and no next attempt", () => {
    expect(deliveryOutcome(entry(2), { _tag: "Answered", status: 204 }, now, base)).toEqual({
      log_id: "log-1",
      delivery: { status: "delivered", attempts: 3, last_status_code: 204, last_error: null, delivered_at: "2026-01-01T00:00:00.000Z" },
      next: null
    })
  })

  it("anything else waits the base doubled per attempt made, then fails on the last attempt", () => {
    const waits = Array.from({ length: maxDeliveryAttempts - 1 }, (_, made) => {
      const outcome = deliveryOutcome(entry(made), { _tag: "Answered", status: 503 }, now, base)
      expect(outcome.delivery).toMatchObject({ status: "pending", attempts: made + 1, last_status_code: 503, last_error: "the receiver answered 503" })
      return DateTime.toEpochMillis(outcome.next!) - DateTime.toEpochMillis(now)
    })
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640].map((s) => s * 1000))
    const last = deliveryOutcome(entry(maxDeliveryAttempts - 1), { _tag: "NotSent", reason: "127.0.0.1 refused the connection" }, now, base)
    expect(last).toEqual({
      log_id: "log-1",
      delivery: { status: "failed", attempts: maxDeliveryAttempts, last_status_code: null, last_error: "127.0.0.1 refused the connection", delivered_at: null },
      next: null
    })
  })

  it("a 3xx is not followed and counts as a failed attempt", () => {
    expect(deliveryOutcome(entry(0), { _tag: "Answered", status: 302 }, now, base).delivery.status).toBe("pending")
  })

  it("an entry that cannot be attempted fails at once with its reason", () => {
    expect(undeliverable(entry(1), "the webhook was turned off")).toEqual({
      log_id: "log-1",
      delivery: { status: "failed", attempts: 2, last_status_code: null, last_error: "the webhook was turned off", delivered_at: null },
      next: null
    })
  })
})
