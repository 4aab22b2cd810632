import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fill, type Operation, operations } from "./support/OpenApiRoutes.ts"
import { type Podium, type Reply, session, startPodium } from "./support/Podium.ts"

/**
 * Walks every operation of /openapi.json with malformed path ids, query values and bodies, and
 * asks one thing of each answer: a 4xx with the contract's error body (or a success), never a
 * 5xx. Generated from the document: a new route is walked the day it is added.
 */
let podium: Podium
let owner: string
let routes: ReadonlyArray<Operation>
let spec: any
let leaderboardId: string

beforeAll(async () => {
  podium = await startPodium({ PROVIDER_TIMEOUT_MS: "300" })
  owner = await session("fuzz-owner")
  spec = (await podium.request("GET", "/openapi.json")).body
  routes = await operations(podium)
  leaderboardId = (await podium.request("POST", "/api/leaderboards", {
    token: owner,
    json: { name: "fuzz", dataset_type: "PUSH", eval_type: "human" }
  })).body.leaderboard.id
})
afterAll(() => podium.stop())

const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const huge = "x".repeat(1024 * 1024)

/** Raw JSON texts of hostile values (escapes kept as escapes, so lone surrogates survive transit). */
const hostileValues = [
  `"a\\u0000b"`,
  `"\\ud800"`,
  `"x\\udfff"`,
  deep(5_000),
  `"${huge}"`,
  `""`,
  `123`,
  `-1`,
  `1e308`,
  `true`,
  `null`,
  `[]`,
  `{}`,
  `{"__proto__":{"admin":true}}`
]

const hostileBodies = [
  "",
  "null",
  "[]",
  `"text"`,
  "42",
  "{",
  "{}",
  deep(100_000),
  `{"a":${deep(40)}}`,
  `{"\\u0000":1}`,
  `{"k":"\\ud800"}`,
  JSON.stringify({ s: huge })
]

const hostileIds = ["abc", "%00", "%ED%A0%80", "a".repeat(5_000), "'%20OR%201=1--", "-1", "1e309", "%2F..%2F", "..."]

const hostileQueries = ["%00", "%ED%A0%80", "x".repeat(10_000), "-1", "1e999", "abc", "99999999999999999999", "", "%FF"]

const resolve = (schema: any): any => {
  if (schema?.$ref) return resolve(spec.components.schemas[schema.$ref.split("/").at(-1)])
  return schema
}

/** The property names a body schema names, through $ref and anyOf/oneOf/allOf. */
const propertiesOf = (schema: any, seen = new Set<any>()): Array<string> => {
  const s = resolve(schema)
  if (s === undefined || seen.has(s)) return []
  seen.add(s)
  return [
    ...Object.keys(s.properties ?? {}),
    ...[...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap((inner: any) => propertiesOf(inner, seen))
  ]
}

const pathFor = (route: Operation) =>
  // a real leaderboard where a route takes one (deeper code runs), never for a DELETE of it
  fill(route.path, route.method === "DELETE" ? {} : { leaderboard_id: leaderboardId })

interface Probe {
  readonly route: Operation
  readonly what: string
  readonly path: string
  readonly body?: string
}

const probesOf = (route: Operation): Array<Probe> => {
  const probes: Array<Probe> = []
  const base = pathFor(route)
  const takesBody = route.method !== "GET"
  const minimal = takesBody ? "{}" : undefined
  for (const param of route.parameters.filter((p) => p.in === "path")) {
    for (const id of hostileIds) {
      const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
        name === param.name ? id : encodeURIComponent(name === "leaderboard_id" ? leaderboardId : crypto.randomUUID()))
      probes.push({ route, what: `path ${param.name}=${id.slice(0, 20)}`, path, ...(minimal ? { body: minimal } : {}) })
    }
  }
  for (const param of route.parameters.filter((p) => p.in === "query")) {
    for (const value of hostileQueries) {
      probes.push({
        route,
        what: `query ${param.name}=${value.slice(0, 20)}`,
        path: `${base}?${encodeURIComponent(param.name)}=${value}`,
        ...(minimal ? { body: minimal } : {})
      })
    }
  }
  if (takesBody) {
    for (const body of hostileBodies) probes.push({ route, what: `body ${body.slice(0, 20)}`, path: base, body })
    for (const property of new Set(propertiesOf(route.body))) {
      for (const value of hostileValues) {
        probes.push({ route, what: `${property}=${value.slice(0, 20)}`, path: base, body: `{${JSON.stringify(property)}:${value}}` })
      }
    }
  }
  return probes
}

const send = (probe: Probe): Promise<Reply> =>
  podium.request(probe.route.method, probe.path, {
    token: owner,
    ...(probe.body === undefined ? {} : { body: probe.body, headers: { "content-type": "application/json" } })
  })

/** Runs `work` over `items`, `width` at a time. */
const pool = async <A>(items: ReadonlyArray<A>, width: number, work: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]!)
  }))
}

describe("every route of /openapi.json, fed hostile input", () => {
  it("answers with a 4xx and the contract's error body (or a success), never a 5xx", async () => {
    const probes = routes.flatMap(probesOf)
    expect(routes.length).toBeGreaterThan(30)
    expect(probes.length).toBeGreaterThan(1_000)
    const failures: Array<string> = []
    await pool(probes, 16, async (probe) => {
      const reply = await send(probe)
      const where = `${probe.route.method} ${probe.route.path} ${probe.what}: ${reply.status} ${reply.text.slice(0, 300)}`
      if (reply.status >= 500) failures.push(where)
      else if (reply.status >= 400) {
        const error = reply.body?.error
        if (typeof error?.code !== "string" || typeof error?.message !== "string") failures.push(`no error body: ${where}`)
      }
    })
    expect(failures).toEqual([])
  }, 240_000)
})
