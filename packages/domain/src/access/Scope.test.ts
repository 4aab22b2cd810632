import { describe, expect, it } from "vitest"
import { grants, Scopes } from "./Scope.ts"

describe("grants", () => {
  it("a scope is granted only when named: no scope implies another", () => {
    for (const required of Scopes) {
      expect(grants(Scopes, required)).toBe(true)
      expect(grants(Scopes.filter((s) => s !== required), required)).toBe(false)
    }
    expect(grants([], "models:read")).toBe(false)
  })
})
