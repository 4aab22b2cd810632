import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { WorkspaceId } from "@podium/domain/shared"
import { apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

let podium: Podium
let ada: SignedIn
let bob: SignedIn
let pat: Caller
let patWorkspace: WorkspaceId

beforeAll(async () => {
  podium = await startPodium()
  ada = await signedIn(podium, "ws-ada")
  bob = await signedIn(podium, "ws-bob")
  // Pat is invited into Ada's workspace as an admin and into Bob's as a member; accepting happens at sign-in.
  await ada.api((c) => c.invites.invite({ payload: { email: "ws-pat@example.com", role: "admin" } }))
  await bob.api((c) => c.invites.invite({ payload: { email: "ws-pat@example.com", role: "member" } }))
  const signed = await signedIn(podium, "ws-pat")
  pat = signed.api
  patWorkspace = signed.workspace
})
afterAll(() => podium.stop())

type Query = { limit?: number; cursor?: WorkspaceId }
const list = (api: Caller, query: Query = {}) => api((c) => c.workspaces.list({ query }))
const rows = (page: Awaited<ReturnType<typeof list>>) => page.data.map((w) => [w.business_id, w.name, w.role, w.personal])

describe("listing the session user's workspaces", () => {
  it("a new user has their personal workspace, which they own", async () => {
    const page = await list(ada.api)
    expect(rows(page)).toEqual([[ada.workspace, "ws-ada@example.com", "owner", true]])
    expect(page.next_cursor).toBeNull()
  })

  it("lists every workspace the user belongs to with their role there, by id", async () => {
    const expected = [
      [patWorkspace, "ws-pat@example.com", "owner", true],
      [ada.workspace, "ws-ada@example.com", "admin", false],
      [bob.workspace, "ws-bob@example.com", "member", false]
    ].toSorted((a, b) => (a[0]! < b[0]! ? -1 : 1))
    expect(rows(await list(pat))).toEqual(expected)
    // The roles are the ones the other routes act on: an admin lists members, a member may not.
    expect((await pat((c) => c.invites.list({ query: { business_id: ada.workspace } }))).business_id).toBe(ada.workspace)
    await expectError(pat((c) => c.invites.list({ query: { business_id: bob.workspace } })), 403, "forbidden")
  })

  it("pages by cursor", async () => {
    const all = rows(await list(pat))
    const first = await list(pat, { limit: 2 })
    expect(rows(first)).toEqual(all.slice(0, 2))
    expect(first.next_cursor).toBe(all[1]![0])
    const second = await list(pat, { limit: 2, cursor: first.next_cursor! })
    expect(rows(second)).toEqual(all.slice(2))
    expect(second.next_cursor).toBeNull()
    // A page that ends exactly at the last workspace has nothing after it.
    expect((await list(pat, { limit: 3 })).next_cursor).toBeNull()
  })

  it("never shows another user's workspaces", async () => {
    expect(rows(await list(bob.api))).toEqual([[bob.workspace, "ws-bob@example.com", "owner", true]])
    const stranger = client(podium, await session("ws-stranger"))
    const page = await list(stranger)
    expect(page.data).toHaveLength(1)
    expect(page.data[0]).toMatchObject({ name: "ws-stranger@example.com", role: "owner", personal: true })
    for (const id of [ada.workspace, bob.workspace, patWorkspace]) expect(JSON.stringify(page)).not.toContain(id)
  })

  it("is for signed-in sessions only: an API token is refused 401, as on other session routes", async () => {
    const token = client(podium, await apiToken(ada.api, undefined, { name: "ws" }))
    await expectError(list(token), 401, "unauthorized")
    await expectError(unchecked(podium, "GET", "/api/workspaces"), 401, "unauthorized")
  })

  it("validates limit and cursor", async () => {
    for (const limit of ["0", "101", "1.5", "x"]) {
      await expectError(unchecked(podium, "GET", `/api/workspaces?limit=${limit}`, { token: ada.session }), 400, "validation_failed", limit)
    }
    await expectValidation(
      unchecked(podium, "GET", "/api/workspaces?cursor=not-a-uuid", { token: ada.session }),
      ["query", "cursor"]
    )
  })
})
