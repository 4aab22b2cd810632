import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { webhookTarget } from "./Webhook.ts"

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
