import { assert, describe, it } from "@effect/vitest"
import { parseOtlpHeaders } from "./Telemetry.ts"

describe("OTEL_EXPORTER_OTLP_HEADERS", () => {
  it("reads comma-separated key=value pairs, trimmed and percent-decoded", () => {
    assert.deepStrictEqual(parseOtlpHeaders("Authorization=Basic%20cGs6c2s%3D , x-scope-orgid=tenant-1"), {
      Authorization: "Basic cGs6c2s=",
      "x-scope-orgid": "tenant-1"
    })
  })

  it("keeps a value's own '=' and skips entries without a key", () => {
    assert.deepStrictEqual(parseOtlpHeaders("token=a=b,=orphan,novalue,,k="), { token: "a=b", k: "" })
  })
})
