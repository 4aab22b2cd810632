import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { BlockList } from "node:net"
import { isBlockedAddress } from "./AddressPolicy.ts"

// An independent oracle for IPv4: node's own BlockList over the same ranges.
const oracle = new BlockList()
for (
  const [base, prefix] of [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16],
    ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
    ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
  ] as const
) oracle.addSubnet(base, prefix, "ipv4")

const hexPair = (ipv4: string) => {
  const [a, b, c, d] = ipv4.split(".").map(Number) as [number, number, number, number]
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
}
const toUint32 = (ipv4: string) => ipv4.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0)
const urlHost = (url: string) => new URL(url).hostname

describe("isBlockedAddress", () => {
  it("blocks every named range", () => {
    for (
      const ip of [
        "127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255",
        "192.168.1.1", "169.254.169.254", "169.254.0.1", "100.64.0.1", "100.127.255.255", "224.0.0.1",
        "239.255.255.250", "0.0.0.0", "0.1.2.3", "255.255.255.255", "240.0.0.1", "198.18.0.1",
        "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "ff02::1", "ff00::",
        "::ffff:127.0.0.1", "::ffff:7f00:1", "::FFFF:7F00:0001", "0:0:0:0:0:ffff:a00:1",
        "::ffff:169.254.169.254", "::ffff:0.0.0.0", "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe",
        "::ffff:0:10.0.0.1", "::127.0.0.1", "::7f00:1", "2002:7f00:1::1", "2002:c0a8:101::",
        "64:ff9b:1::1", "2001::1", "2001:db8::1", "fec0::1"
      ]
    ) assert.isTrue(isBlockedAddress(ip), ip)
  })

  it("allows public addresses, including the edges of blocked ranges", () => {
    for (
      const ip of [
        "8.8.8.8", "93.184.216.34", "1.1.1.1", "11.0.0.0", "9.255.255.255", "172.15.255.255", "172.32.0.0",
        "192.167.255.255", "192.169.0.0", "100.63.255.255", "100.128.0.0", "169.253.255.255", "169.255.0.0",
        "126.255.255.255", "128.0.0.0", "223.255.255.255", "1.0.0.0",
        "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::200e", "fbff:ffff::1", "fe7f::1",
        "::ffff:8.8.8.8", "::ffff:808:808", "64:ff9b::8.8.8.8", "2002:808:808::1"
      ]
    ) assert.isFalse(isBlockedAddress(ip), ip)
  })

  it("strips brackets and zone ids", () => {
    assert.isTrue(isBlockedAddress("[::1]"))
    assert.isTrue(isBlockedAddress("[::ffff:7f00:1]"))
    assert.isTrue(isBlockedAddress("fe80::1%eth0"))
    assert.isFalse(isBlockedAddress("[2606:4700:4700::1111]"))
  })

  it("fails closed on anything that is not an IP address", () => {
    for (
      const text of ["", "localhost", "example.com", "127.1", "0x7f.0.0.1", "2130706433", "010.0.0.1", "999.1.1.1",
        "1.2.3.4.5", "[::1", ":::1", "1::2::3", "::ffff:999.0.0.1", "gggg::1"]
    ) assert.isTrue(isBlockedAddress(text), text)
  })

  it("agrees with node's BlockList on every IPv4 address", () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => isBlockedAddress(ip) === oracle.check(ip, "ipv4")), { numRuns: 5000 })
  })

  it("judges the IPv6 forms that embed an IPv4 address as that address", () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const verdict = isBlockedAddress(ip)
        return [`::ffff:${ip}`, `::ffff:${hexPair(ip)}`, `64:ff9b::${ip}`, `::ffff:0:${ip}`, `2002:${hexPair(ip)}::1`]
          .every((form) => isBlockedAddress(form) === verdict)
      }),
      { numRuns: 2000 }
    )
  })

  it("gives the same verdict after WHATWG URL normalisation", () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const verdict = isBlockedAddress(ip)
        return isBlockedAddress(urlHost(`http://${toUint32(ip)}/`)) === verdict &&
          isBlockedAddress(urlHost(`http://0x${toUint32(ip).toString(16)}/`)) === verdict &&
          isBlockedAddress(urlHost(`http://[::ffff:${ip}]/`)) === verdict
      }),
      { numRuns: 2000 }
    )
    fc.assert(
      fc.property(fc.ipV6(), (ip) => isBlockedAddress(urlHost(`http://[${ip}]/`)) === isBlockedAddress(ip)),
      { numRuns: 2000 }
    )
  })

  it("blocks any address inside the IPv6 local ranges", () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16))
    const inRange = (first: fc.Arbitrary<number>) =>
      fc.tuple(first, fc.array(group, { minLength: 7, maxLength: 7 }))
        .map(([head, rest]) => [head.toString(16), ...rest].join(":"))
    fc.assert(
      fc.property(
        fc.oneof(
          inRange(fc.integer({ min: 0xfc00, max: 0xfdff })),
          inRange(fc.integer({ min: 0xfe80, max: 0xfebf })),
          inRange(fc.integer({ min: 0xff00, max: 0xffff }))
        ),
        isBlockedAddress
      ),
      { numRuns: 2000 }
    )
  })
})
