import { describe, expect, it } from "vitest"
import { clientKey, makeFailureTable } from "./FailedAuthentications.ts"

describe("makeFailureTable", () => {
  it("lets an address fail perMinute times, then makes it wait until one failure has refilled", () => {
    const table = makeFailureTable(6) // one failure back every 10 s
    for (let i = 0; i < 6; i++) {
      expect(table.retryAfter("10.0.0.1", 0)).toBe(0)
      table.fail("10.0.0.1", 0)
    }
    expect(table.retryAfter("10.0.0.1", 0)).toBe(10)
    expect(table.retryAfter("10.0.0.1", 4_000)).toBe(6)
    expect(table.retryAfter("10.0.0.1", 9_999)).toBe(1)
    expect(table.retryAfter("10.0.0.1", 10_000)).toBe(0)
    // another address is untouched
    expect(table.retryAfter("10.0.0.2", 0)).toBe(0)
  })

  it("refills to perMinute at most, however long the address was quiet", () => {
    const table = makeFailureTable(3)
    table.fail("a", 0)
    for (let i = 0; i < 3; i++) table.fail("a", 3_600_000)
    expect(table.retryAfter("a", 3_600_000)).toBe(20)
  })

  it("tracks at most maxAddresses, forgetting the least recently failed", () => {
    const table = makeFailureTable(1, 3)
    for (const address of ["a", "b", "c"]) table.fail(address, 0)
    table.fail("a", 1) // a failed again: b is now the least recent
    table.fail("d", 2)
    expect(table.size()).toBe(3)
    expect(table.retryAfter("b", 2)).toBe(0)
    for (const address of ["a", "c", "d"]) expect(table.retryAfter(address, 2)).toBeGreaterThan(0)
  })
})

describe("clientKey", () => {
  it("counts IPv4 as is, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64", () => {
    expect(clientKey("127.0.0.2")).toBe("127.0.0.2")
    expect(clientKey("::ffff:127.0.0.2")).toBe("127.0.0.2")
    expect(clientKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:0DB8:0001:0002::9")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(clientKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(clientKey("::1")).toBe("0:0:0:0::/64")
  })
})
