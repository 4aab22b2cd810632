import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash, randomUUID } from "node:crypto"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { PushTokenId } from "@podium/domain/shared"
import { aLeaderboard, apiToken, pushLeaderboard as createPushLeaderboard, pushRows, pushToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  podium = await startPodium()
  owner = await signedIn(podium, "datasets-owner")
})
afterAll(async () => {
  await podium.stop()
})

const pushLeaderboard = (overrides: Parameters<typeof aLeaderboard>[0] = {}) => createPushLeaderboard(owner.api, overrides)

const download = async (id: LeaderboardId, token: string, version?: number) => {
  const reply = await podium.request("GET", `/v1/leaderboard/${id}/dataset${version === undefined ? "" : `?version=${version}`}`, {
    headers: token.startsWith("hpd_") ? { "x-service-push-token": token } : { authorization: `Bearer ${token}` }
  })
  return reply
}

describe("push, consolidate, download", () => {
  it("stores valid rows, rejects the others one by one, and consolidates them into a version", async () => {
    const id = await pushLeaderboard()
    const pushed = await owner.api((c) =>
      c.pushDatasets.push({
        params: { leaderboard_id: id },
        payload: [
          { input: "2+2?", expected: "4", extra: { kept: true } },
          { messages: [{ role: "user", content: "hi" }] },
          { expected: "no input" },
          "not a row",
          { input: "x", tags: "not an array" }
        ]
      })
    )
    expect(pushed).toMatchObject({ accepted_rows: 2, rejected_rows: 3, status: "partial", pending_events: 2 })
    expect(pushed.rejections.map((r) => [r.index, r.code])).toEqual([
      [2, "missing_input"],
      [3, "invalid_row"],
      [4, "invalid_row"]
    ])

    const consolidated = await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    expect(consolidated.version).toMatchObject({ version: 1, row_count: 2, added_rows: 2, trigger: "manual" })
    expect(consolidated.pending_events).toBe(0)

    const reply = await download(id, owner.session)
    expect(reply.status).toBe(200)
    const lines = reply.text.trimEnd().split("\n").map((l) => JSON.parse(l))
    expect(lines).toEqual([
      { input: "2+2?", expected: "4", extra: { kept: true } },
      { messages: [{ role: "user", content: "hi" }] }
    ])
    const sha = createHash("sha256").update(reply.text).digest("hex")
    expect(consolidated.version!.sha256).toBe(sha)
    expect(reply.headers.get("x-service-dataset-sha256")).toBe(sha)

    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    expect(status.versions.map((v) => v.version)).toEqual([1])
    expect(status.limits.daily.used).toBe(2)
  })

  it("push tokens work for their own leaderboard only, and stop when revoked", async () => {
    const id = await pushLeaderboard()
    const other = await pushLeaderboard()
    const issued = await owner.api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { name: "ingest" } }))
    expect(issued.secret).toMatch(/^hpd_/)
    const push = client(podium, issued.secret!)
    const answer = await push((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: { rows: [{ input: "a" }] } }))
    expect(answer.accepted_rows).toBe(1)
    await expectError(push((c) => c.pushDatasets.push({ params: { leaderboard_id: other }, payload: { input: "a" } })), 401, "unauthorized")
    const listed = await owner.api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { issue_token: false } }))
    expect(listed.secret).toBeUndefined()
    expect(listed.tokens.map((t) => t.name)).toEqual(["ingest"])
    expect(JSON.stringify(listed)).not.toContain(issued.secret!)
    // the body is optional: a POST with none issues a token too
    const bare = await podium.request("POST", `/v1/leaderboard/${id}/dataset/token`, { token: await apiToken(owner.api, ["leaderboards:write"]) })
    expect(bare.status, bare.text).toBe(200)
    expect(bare.body.secret).toMatch(/^hpd_/)
    expect(await owner.api((c) => c.datasetAdmin.revokeTokens({ params: { leaderboard_id: id } }))).toEqual({ revoked: 2 })
    await expectError(push((c) => c.pushDatasets.status({ params: { leaderboard_id: id } })), 401, "unauthorized")
  })

  it("accepts exactly the limit under concurrent pushes", async () => {
    const id = await pushLeaderboard({ daily_event_limit: 3000 })
    const rows = Array.from({ length: 500 }, (_, i) => ({ input: `q${i}` }))
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () =>
      owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: rows }))
    ))
    const accepted = answers.reduce((n, a) => n + (a.status === "fulfilled" ? a.value.accepted_rows : 0), 0)
    expect(accepted).toBe(3000)
    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    expect(status.pending_events).toBe(3000)
    const refused = await expectError(
      owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: { input: "one more" } })),
      429,
      "event_limit_exceeded"
    )
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
  })
})

const pushTo = (caller: Caller, leaderboard_id: LeaderboardId, payload: unknown) =>
  caller((c) => c.pushDatasets.push({ params: { leaderboard_id }, payload }))

const statusOf = (caller: Caller, leaderboard_id: LeaderboardId) =>
  caller((c) => c.pushDatasets.status({ params: { leaderboard_id } }))

const consolidate = (leaderboard_id: LeaderboardId) =>
  owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id } }))

/** A version's JSONL through the typed client: its text, its rows, and its version and digest headers. */
const downloaded = async (caller: Caller, leaderboard_id: LeaderboardId, version?: number) => {
  const [text, response] = await caller((c) =>
    c.pushDatasets.download({
      params: { leaderboard_id },
      query: version === undefined ? {} : { version },
      responseMode: "decoded-and-response"
    })
  )
  return {
    text,
    rows: text === "" ? [] : text.trimEnd().split("\n").map((line) => JSON.parse(line) as unknown),
    version: response.headers["x-service-dataset-version"],
    sha256: response.headers["x-service-dataset-sha256"]
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** Polls `read` until `done` holds of its answer, for at most `withinMs`; answers the last one. */
const eventually = async <A>(read: () => Promise<A>, done: (a: A) => boolean, withinMs = 15_000): Promise<A> => {
  const deadline = Date.now() + withinMs
  let last = await read()
  while (!done(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    last = await read()
  }
  return last
}

describe("push token scope", () => {
  it("reaches push, status and download of its own leaderboard, and nothing of another leaderboard", async () => {
    const id = await pushLeaderboard()
    const other = await pushLeaderboard()
    const push = client(podium, await pushToken(owner.api, id))

    expect(await pushTo(push, id, pushRows(2))).toMatchObject({ accepted_rows: 2, status: "accepted" })
    await consolidate(id)
    expect((await statusOf(push, id)).versions.map((v) => [v.version, v.row_count])).toEqual([[1, 2]])
    expect((await downloaded(push, id)).rows).toEqual(pushRows(2))

    // the other leaderboard has a version, so a 404 cannot stand in for the refusal
    await pushTo(owner.api, other, pushRows(1, "other"))
    await consolidate(other)
    await expectError(pushTo(push, other, pushRows(1, "intruder")), 401, "unauthorized", "push")
    await expectError(statusOf(push, other), 401, "unauthorized", "status")
    await expectError(downloaded(push, other), 401, "unauthorized", "download")
    const untouched = await statusOf(owner.api, other)
    expect(untouched.pending_events).toBe(0)
    expect(untouched.limits.daily.used).toBe(1)
  })

  it("is 401 on every management route, /api/* and the dataset's own administration", async () => {
    const id = await pushLeaderboard()
    const secret = await pushToken(owner.api, id)
    const routes: ReadonlyArray<readonly [string, string, unknown?]> = [
      ["GET", "/api/leaderboards"],
      ["POST", "/api/leaderboards", aLeaderboard()],
      ["GET", `/api/leaderboards/${id}`],
      ["PATCH", `/api/leaderboards/${id}`, { name: "taken over" }],
      ["DELETE", `/api/leaderboards/${id}`],
      ["GET", `/api/leaderboards/${id}/models`],
      ["GET", "/api/tokens"],
      ["POST", "/api/tokens", { name: "escalated" }],
      ["GET", "/api/invite-user"],
      ["POST", "/api/datasets/hub/check", { dataset_url: "https://huggingface.co/datasets/a/b" }],
      ["POST", `/v1/leaderboard/${id}/dataset/token`, {}],
      ["DELETE", `/v1/leaderboard/${id}/dataset/tokens`],
      ["DELETE", `/v1/leaderboard/${id}/dataset/tokens/0190aaaa-0000-7000-8000-000000000000`],
      ["POST", `/v1/leaderboard/${id}/dataset/consolidate`]
    ]
    for (const [method, path, json] of routes) {
      const reply = await podium.request(method, path, { headers: { "x-service-push-token": secret }, json })
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(401)
      expect(reply.body?.error?.code, `${method} ${path}`).toBe("unauthorized")
    }
    // none of them did anything: the leaderboard is there as it was, and the token still pushes
    expect((await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))).leaderboard.name).toBe(
      aLeaderboard().name
    )
    expect((await pushTo(client(podium, secret), id, pushRows(1))).accepted_rows).toBe(1)
  })

  it("refuses an unknown push token with a message about it, and a token of another workspace's leaderboard", async () => {
    const id = await pushLeaderboard()
    const unknown = await expectError(
      pushTo(client(podium, `hpd_${"0".repeat(43)}`), id, pushRows(1)),
      401,
      "unauthorized"
    )
    expect(unknown.error.message).toMatch(/push token/i)

    const stranger = await signedIn(podium, "datasets-stranger")
    const theirs = await createPushLeaderboard(stranger.api)
    const foreign = client(podium, await pushToken(stranger.api, theirs))
    expect((await pushTo(foreign, theirs, pushRows(1))).accepted_rows).toBe(1) // a working token
    await expectError(pushTo(foreign, id, pushRows(1)), 401, "unauthorized", "push")
    await expectError(statusOf(foreign, id), 401, "unauthorized", "status")
    await expectError(downloaded(foreign, id), 401, "unauthorized", "download")
    expect((await statusOf(owner.api, id)).limits.daily.used).toBe(0)
  })

  it("lists the dataset's tokens without secrets, and revokes all of them at once", async () => {
    const id = await pushLeaderboard()
    const secrets = [await pushToken(owner.api, id, "first"), await pushToken(owner.api, id, "second")]
    const listed = await owner.api((c) =>
      c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { issue_token: false } })
    )
    expect(listed.secret).toBeUndefined()
    expect(listed.token).toBeUndefined()
    expect(listed.tokens.map((t) => t.name).sort()).toEqual(["first", "second"])
    expect(listed.push_url).toMatch(new RegExp(`/v1/leaderboard/${id}/dataset/push$`))
    const text = JSON.stringify(listed)
    for (const secret of secrets) expect(text).not.toContain(secret.slice("hpd_".length))

    expect(await owner.api((c) => c.datasetAdmin.revokeTokens({ params: { leaderboard_id: id } }))).toEqual({ revoked: 2 })
    for (const secret of secrets) {
      await expectError(pushTo(client(podium, secret), id, pushRows(1)), 401, "unauthorized")
    }
    const after = await owner.api((c) =>
      c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { issue_token: false } })
    )
    expect(after.tokens.every((t) => t.revoked_at !== null)).toBe(true)
    expect(await owner.api((c) => c.datasetAdmin.revokeTokens({ params: { leaderboard_id: id } }))).toEqual({ revoked: 0 })
  })

  it("revokes one push token: it no longer pushes, the others do; 404 for another leaderboard's or an unknown token", async () => {
    const id = await pushLeaderboard()
    const other = await pushLeaderboard()
    const [first, second, elsewhere] = [
      await pushToken(owner.api, id, "first"),
      await pushToken(owner.api, id, "second"),
      await pushToken(owner.api, other, "elsewhere")
    ]
    const tokensOf = async (leaderboard_id: LeaderboardId) =>
      (await owner.api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id }, payload: { issue_token: false } })))
        .tokens
    const idOf = async (leaderboard_id: LeaderboardId, name: string) =>
      (await tokensOf(leaderboard_id)).find((t) => t.name === name)!.id
    const firstId = await idOf(id, "first")
    const path = (leaderboard_id: LeaderboardId, token_id: string) => `/v1/leaderboard/${leaderboard_id}/dataset/tokens/${token_id}`

    const reply = await podium.request("DELETE", path(id, firstId), { headers: { authorization: `Bearer ${owner.session}` } })
    expect(reply.status, reply.text).toBe(204)
    expect(reply.text).toBe("")
    await expectError(pushTo(client(podium, first), id, pushRows(1)), 401, "unauthorized")
    expect((await pushTo(client(podium, second), id, pushRows(1))).accepted_rows).toBe(1)
    const listed = await tokensOf(id)
    expect(listed.find((t) => t.name === "first")!.revoked_at).not.toBeNull()
    expect(listed.find((t) => t.name === "second")!.revoked_at).toBeNull()
    // again: still revoked, still 204
    await owner.api((c) => c.datasetAdmin.revokeToken({ params: { leaderboard_id: id, token_id: PushTokenId.make(firstId) } }))

    // another leaderboard's token named under this one, and an unknown id: 404, and nothing revoked
    const elsewhereId = await idOf(other, "elsewhere")
    await expectError(
      owner.api((c) => c.datasetAdmin.revokeToken({ params: { leaderboard_id: id, token_id: PushTokenId.make(elsewhereId) } })),
      404,
      "not_found"
    )
    await expectError(
      owner.api((c) =>
        c.datasetAdmin.revokeToken({ params: { leaderboard_id: id, token_id: PushTokenId.make(randomUUID()) } })
      ),
      404,
      "not_found"
    )
    expect((await pushTo(client(podium, elsewhere), other, pushRows(1))).accepted_rows).toBe(1)

    // another workspace cannot see the leaderboard; a token without leaderboards:write may not revoke
    const stranger = await signedIn(podium, "datasets-revoker")
    const secondId = await idOf(id, "second")
    await expectError(
      stranger.api((c) => c.datasetAdmin.revokeToken({ params: { leaderboard_id: id, token_id: PushTokenId.make(secondId) } })),
      404,
      "not_found"
    )
    const reader = client(podium, await apiToken(owner.api, ["leaderboards:read"]))
    await expectError(
      reader((c) => c.datasetAdmin.revokeToken({ params: { leaderboard_id: id, token_id: PushTokenId.make(secondId) } })),
      403,
      "insufficient_scope"
    )
    // a push token cannot revoke (not even itself)
    expect((await podium.request("DELETE", path(id, secondId), { headers: { "x-service-push-token": second } })).status)
      .toBe(401)
    expect((await pushTo(client(podium, second), id, pushRows(1))).accepted_rows).toBe(1)
  })
})

describe("idempotent retries", () => {
  for (const [label, rules] of [["without event limits", {}], ["under an event limit", { daily_event_limit: 1000 }]] as const) {
    it(`a batch with row ids pushed twice is stored and counted once (${label})`, async () => {
      const id = await pushLeaderboard(rules)
      const rows = pushRows(5, "retry", { ids: true })
      expect(await pushTo(owner.api, id, rows)).toMatchObject({ accepted_rows: 5, duplicate_rows: 0, pending_events: 5 })

      const again = await pushTo(owner.api, id, rows)
      expect(again).toMatchObject({ accepted_rows: 5, duplicate_rows: 5, rejected_rows: 0, status: "accepted", pending_events: 5 })
      expect(again.limits.daily.used).toBe(5)
      const status = await statusOf(owner.api, id)
      expect(status.pending_events).toBe(5)
      expect(status.limits.daily.used).toBe(5)

      // a retry after consolidation, with two new rows, stores only the new ones
      await consolidate(id)
      const more = await pushTo(owner.api, id, pushRows(7, "retry", { ids: true }))
      expect(more).toMatchObject({ accepted_rows: 7, duplicate_rows: 5, pending_events: 2 })
      expect(more.limits.daily.used).toBe(7)
      await consolidate(id)
      expect((await downloaded(owner.api, id)).rows).toEqual(pushRows(7, "retry", { ids: true }))
    })
  }

  it("stores a row id repeated inside one push once", async () => {
    const id = await pushLeaderboard()
    const pushed = await pushTo(owner.api, id, [
      { id: "same", input: "first" },
      { id: "same", input: "first" },
      { id: "other", input: "second" }
    ])
    expect(pushed).toMatchObject({ accepted_rows: 3, duplicate_rows: 1, pending_events: 2 })
    expect(pushed.limits.daily.used).toBe(2)
    await consolidate(id)
    expect((await downloaded(owner.api, id)).rows).toEqual([{ id: "same", input: "first" }, { id: "other", input: "second" }])
  })
})

describe("consolidation", () => {
  it("makes a version by itself once consolidate_every_events rows are pending", async () => {
    const id = await pushLeaderboard({ consolidate_every_events: 5 })
    const early = await pushTo(owner.api, id, pushRows(4, "early"))
    expect(early.consolidation).toMatchObject({ triggered: null, events_until_next: 1, every_events: 5 })
    const pushedAt = Date.now()
    const fifth = await pushTo(owner.api, id, pushRows(1, "fifth"))
    expect(fifth.consolidation.triggered).toBe("events")

    // made right after the push, not left for the minutely check
    const status = await eventually(
      () => statusOf(owner.api, id),
      (s) => s.versions.length > 0 && s.versions[0]!.sha256 !== null,
      5_000
    )
    expect(status.versions.map((v) => [v.version, v.row_count, v.trigger])).toEqual([[1, 5, "events"]])
    expect(Date.parse(status.versions[0]!.created_at) - pushedAt).toBeLessThan(3_000)
    expect(status.pending_events).toBe(0)
    const { rows, text } = await downloaded(owner.api, id)
    expect(rows).toEqual([...pushRows(4, "early"), ...pushRows(1, "fifth")])
    expect(sha256(text)).toBe(status.versions[0]!.sha256)
  })

  it("dedupe drops rows whose input and reference a version or the same batch already has", async () => {
    const id = await pushLeaderboard({ dedupe: true })
    await pushTo(owner.api, id, [{ input: "a", expected: "1" }, { input: "b", expected: "2" }])
    expect((await consolidate(id)).version).toMatchObject({ version: 1, row_count: 2, dropped_duplicates: 0 })

    await pushTo(owner.api, id, [
      { input: "a", expected: "1", note: "same as version 1" },
      { input: "c", expected: "3" },
      { input: "c", expected: "3", note: "same as the row before" },
      { input: "a", expected: "another reference" }
    ])
    const second = await consolidate(id)
    expect(second.version).toMatchObject({ version: 2, row_count: 4, added_rows: 2, dropped_duplicates: 2 })
    expect((await downloaded(owner.api, id)).rows).toEqual([
      { input: "a", expected: "1" },
      { input: "b", expected: "2" },
      { input: "c", expected: "3" },
      { input: "a", expected: "another reference" }
    ])
  })

  it("keeps the newest max_samples_to_gather rows with auto_limit_size", async () => {
    const id = await pushLeaderboard({ auto_limit_size: true, max_samples_to_gather: 3 })
    await pushTo(owner.api, id, pushRows(5))
    expect((await consolidate(id)).version).toMatchObject({ version: 1, row_count: 3 })
    expect((await downloaded(owner.api, id)).rows).toEqual(pushRows(5).slice(2))

    await pushTo(owner.api, id, pushRows(2, "later"))
    expect((await consolidate(id)).version).toMatchObject({ version: 2, row_count: 3 })
    expect((await downloaded(owner.api, id)).rows).toEqual([pushRows(5)[4], ...pushRows(2, "later")])
  })

  it("keeps every version as it was: an older version downloads byte for byte, with its digest", async () => {
    const id = await pushLeaderboard()
    await expectError(downloaded(owner.api, id), 404, "not_found", "before any version")
    await pushTo(owner.api, id, pushRows(2))
    const first = (await consolidate(id)).version!
    const v1 = await downloaded(owner.api, id)
    expect(v1).toMatchObject({ version: "1", sha256: first.sha256 })
    expect(sha256(v1.text)).toBe(first.sha256)

    await pushTo(owner.api, id, pushRows(1, "newer"))
    const second = (await consolidate(id)).version!
    expect(second.sha256).not.toBe(first.sha256)
    expect((await downloaded(owner.api, id)).rows).toEqual([...pushRows(2), ...pushRows(1, "newer")])

    const again = await downloaded(owner.api, id, 1)
    expect(again.text).toBe(v1.text)
    expect(again).toMatchObject({ version: "1", sha256: first.sha256 })
    expect(sha256(again.text)).toBe(first.sha256)
    const listed = (await statusOf(owner.api, id)).versions
    expect(listed.map((v) => [v.version, v.row_count, v.sha256])).toEqual([[2, 3, second.sha256], [1, 2, first.sha256]])
    await expectError(downloaded(owner.api, id, 99), 404, "not_found", "version 99")
  })
})
