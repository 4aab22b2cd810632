import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

let fake: OpenAiFake
let podium: Podium
let owner: string

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await session("documents-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const H = (id: string) => `/api/leaderboards/${id}/human`
const b64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64")

const leaderboard = async () => {
  const id = (await podium.request("POST", "/api/leaderboards", {
    token: owner,
    json: { name: "docs", eval_type: "human", dataset_type: "PUSH" }
  })).body.leaderboard.id as string
  for (const path of ["d-1", "d-2"]) {
    await podium.request("POST", `/api/leaderboards/${id}/models`, {
      token: owner,
      json: { name: path, platform: "Custom", url: `${fake.url}/${path}`, auth_type: "none" }
    })
  }
  return id
}
const upload = (id: string, json: Record<string, unknown>) =>
  podium.request("POST", `${H(id)}/documents`, { token: owner, json: { id: crypto.randomUUID(), scope: "case", ...json } })
const newCase = (id: string, json: Record<string, unknown> = {}) =>
  podium.request("POST", `${H(id)}/cases`, { token: owner, json: { id: crypto.randomUUID(), input: "What applies?", ...json } })

describe("human-evaluation documents", () => {
  it("uploads once: 201, an identical retry 200, the id with other content 409", async () => {
    const id = await leaderboard()
    const docId = crypto.randomUUID()
    const created = await upload(id, { id: docId, name: "policy.md", data: b64("# Refunds\n30 days") })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      id: docId,
      name: "policy.md",
      scope: "case",
      media_type: "text/markdown",
      size_bytes: 17,
      sha256: createHash("sha256").update("# Refunds\n30 days").digest("hex"),
      archived_at: null
    })
    expect(created.body.data).toBeUndefined()
    const retry = await upload(id, { id: docId, name: "policy.md", data: b64("# Refunds\n30 days") })
    expect(retry.status).toBe(200)
    expect(retry.body).toEqual(created.body)
    const other = await upload(id, { id: docId, name: "policy.md", data: b64("# Refunds\n60 days") })
    expect(other.status).toBe(409)
    expect(other.body.error.code).toBe("id_reused")

    const caseId = (await newCase(id)).body.id
    const asDocument = await upload(id, { id: caseId, name: "x.txt", data: b64("x") })
    expect(asDocument.status).toBe(409)
    expect(asDocument.body.error.code).toBe("id_reused")
  })

  it("reads txt, md, csv, json and pdf; refuses other files with 400 and oversize ones with 413", async () => {
    const id = await leaderboard()
    const pdf = readFileSync(new URL("../packages/adapters-http/test-fixtures/two-pages.pdf", import.meta.url))
    expect((await upload(id, { name: "paper.pdf", data: b64(pdf) })).body.media_type).toBe("application/pdf")
    expect((await upload(id, { name: "rows.csv", data: b64("a,b\n1,2") })).body.media_type).toBe("text/csv")
    expect((await upload(id, { name: "data.json", data: b64("{\"a\":1}") })).body.media_type).toBe("application/json")
    expect((await upload(id, { name: "notes.txt", data: b64("plain") })).body.media_type).toBe("text/plain")

    const png = await upload(id, { name: "image.png", data: b64(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])) })
    expect(png.status).toBe(400)
    expect(png.body.error.code).toBe("invalid_document")
    const badJson = await upload(id, { name: "data.json", data: b64("{nope") })
    expect(badJson.status).toBe(400)
    const notBase64 = await upload(id, { name: "a.txt", data: "%%%not base64%%%" })
    expect(notBase64.status).toBe(400)
    expect(notBase64.body.error.details.issues[0].path).toEqual(["payload", "data"])

    const tooLong = await upload(id, { name: "long.txt", data: b64("x".repeat(200_001)) })
    expect(tooLong.status).toBe(413)
    expect(tooLong.body.error).toMatchObject({ code: "payload_too_large", details: { limit: 200_000 } })
    const tooBig = await upload(id, { name: "big.txt", data: b64(new Uint8Array(10 * 1024 * 1024 + 1).fill(0x41)) })
    expect(tooBig.status).toBe(413)
    expect(tooBig.body.error.details.limit).toBe(10 * 1024 * 1024)
  })

  it("shared documents go into every new draft until archived; generation sends the documents' text", async () => {
    const id = await leaderboard()
    const shared = await upload(id, { name: "policy.md", scope: "shared", data: b64("Refunds within 30 days.") })
    expect(shared.status).toBe(201)
    const own = await upload(id, { name: "order.txt", data: b64("Order 42 was paid on May 1.") })
    expect((await podium.request("GET", `${H(id)}/documents`, { token: owner })).body.documents.map((d: { id: string }) => d.id))
      .toEqual([shared.body.id])

    const withBoth = await newCase(id, { attachment_ids: [own.body.id] })
    expect(withBoth.status).toBe(201)
    expect(withBoth.body.attachments.map((a: { id: string; scope: string }) => [a.id, a.scope])).toEqual([
      [own.body.id, "case"],
      [shared.body.id, "shared"]
    ])
    const generated = await podium.request("POST", `${H(id)}/cases/${withBoth.body.id}/generate`, { token: owner, json: {} })
    expect(generated.status).toBe(200)
    expect(fake.seen.at(-1)!.body.messages.at(-1).content).toBe(
      "Document: order.txt\nOrder 42 was paid on May 1.\n\nDocument: policy.md\nRefunds within 30 days.\n\nWhat applies?"
    )

    const archived = await podium.request("DELETE", `${H(id)}/documents/${shared.body.id}`, { token: owner })
    expect(archived.status).toBe(200)
    expect(archived.body.archived_at).not.toBeNull()
    expect((await podium.request("GET", `${H(id)}/documents`, { token: owner })).body.documents).toEqual([])
    expect((await newCase(id)).body.attachments).toEqual([])
    const earlier = await podium.request("GET", `${H(id)}/cases/${withBoth.body.id}`, { token: owner })
    expect(earlier.body.attachments).toHaveLength(2)
    const reuse = await upload(id, { id: shared.body.id, name: "policy.md", scope: "shared", data: b64("Refunds within 30 days.") })
    expect(reuse.status).toBe(409)
    expect(reuse.body.error.message).toContain("archived")
    expect((await podium.request("DELETE", `${H(id)}/documents/${own.body.id}`, { token: owner })).status).toBe(404)
  })

  it("attachment_ids name only this leaderboard's case documents; a case's documents fit 400,000 characters", async () => {
    const id = await leaderboard()
    const elsewhere = await leaderboard()
    const foreign = await upload(elsewhere, { name: "a.txt", data: b64("a") })
    const shared = await upload(id, { name: "s.txt", scope: "shared", data: b64("s".repeat(150_000)) })
    for (const bad of [foreign.body.id, shared.body.id, crypto.randomUUID()]) {
      const reply = await newCase(id, { attachment_ids: [bad] })
      expect(reply.status).toBe(400)
      expect(reply.body.error.details.issues[0].path).toEqual(["attachment_ids", 0])
    }
    const first = await upload(id, { name: "1.txt", data: b64("1".repeat(150_000)) })
    const second = await upload(id, { name: "2.txt", data: b64("2".repeat(150_000)) })
    expect((await newCase(id, { attachment_ids: [first.body.id] })).status).toBe(201) // 300,000 with the shared one
    const over = await newCase(id, { attachment_ids: [first.body.id, second.body.id] })
    expect(over.status).toBe(413)
    expect(over.body.error.details.limit).toBe(400_000)
  })
})
