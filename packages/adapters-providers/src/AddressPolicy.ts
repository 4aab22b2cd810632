import { isIPv4, isIPv6 } from "node:net"

const parseIPv4 = (text: string): bigint | undefined =>
  isIPv4(text)
    ? text.split(".").reduce((acc, octet) => (acc << 8n) | BigInt(octet), 0n)
    : undefined

const parseIPv6 = (input: string): bigint | undefined => {
  const text = input.split("%")[0]!
  if (!isIPv6(text)) return undefined
  const lastColon = text.lastIndexOf(":")
  const tail = parseIPv4(text.slice(lastColon + 1))
  const head = tail === undefined
    ? text
    : `${text.slice(0, lastColon + 1)}${(tail >> 16n).toString(16)}:${(tail & 0xffffn).toString(16)}`
  const [left, right] = head.split("::")
  const groups = (part: string | undefined) => part ? part.split(":") : []
  const expanded = right === undefined
    ? groups(left)
    : [...groups(left), ...Array(8 - groups(left).length - groups(right).length).fill("0"), ...groups(right)]
  return expanded.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n)
}

type Cidr = readonly [base: bigint, prefix: number]

const v4 = (text: string): Cidr => {
  const [base, prefix] = text.split("/")
  return [parseIPv4(base!)!, Number(prefix)]
}
const v6 = (text: string): Cidr => {
  const [base, prefix] = text.split("/")
  return [parseIPv6(base!)!, Number(prefix)]
}

/** Ranges an outbound request to a user-given URL must never reach. */
const blockedV4: ReadonlyArray<Cidr> = [
  "0.0.0.0/8", // "this network", includes the unspecified address
  "10.0.0.0/8",
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8",
  "169.254.0.0/16", // link-local, includes cloud metadata 169.254.169.254
  "172.16.0.0/12",
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation ranges: never on the internet
  "192.168.0.0/16",
  "198.18.0.0/15", // benchmarking, used inside some networks
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4", // multicast
  "240.0.0.0/4" // reserved, includes broadcast 255.255.255.255
].map(v4)

const blockedV6: ReadonlyArray<Cidr> = [
  "::/96", // unspecified, loopback and the deprecated IPv4-compatible forms
  "64:ff9b:1::/48", // local-use NAT64
  "100::/64", // discard-only
  "2001::/32", // Teredo: hides an IPv4 address
  "2001:db8::/32", // documentation
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "fec0::/10", // deprecated site-local
  "ff00::/8" // multicast
].map(v6)

/** IPv6 ranges that carry an IPv4 address in their low 32 bits; the IPv4 address decides. */
const embeddingV4: ReadonlyArray<Cidr> = [
  "::ffff:0:0/96", // IPv4-mapped
  "::ffff:0:0:0/96", // IPv4-translated (SIIT)
  "64:ff9b::/96" // NAT64
].map(v6)

const sixToFour = v6("2002::/16")

const inRange = (address: bigint, bits: number) => ([base, prefix]: Cidr) =>
  address >> BigInt(bits - prefix) === base >> BigInt(bits - prefix)

const isBlockedV4 = (address: bigint) => blockedV4.some(inRange(address, 32))

const isBlockedV6 = (address: bigint): boolean => {
  if (embeddingV4.some(inRange(address, 128))) return isBlockedV4(address & 0xffffffffn)
  if (inRange(address, 128)(sixToFour)) return isBlockedV4((address >> 80n) & 0xffffffffn)
  return blockedV6.some(inRange(address, 128))
}

/**
 * Whether an outbound connection to this IP address must be refused. Accepts dotted IPv4 and any
 * IPv6 text form (brackets, zone ids, embedded dotted quads); anything else is refused, so a caller
 * that forgets to resolve a host name fails closed.
 */
export const isBlockedAddress = (ip: string): boolean => {
  const text = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  const ipv4 = parseIPv4(text)
  if (ipv4 !== undefined) return isBlockedV4(ipv4)
  const ipv6 = parseIPv6(text)
  return ipv6 === undefined || isBlockedV6(ipv6)
}
