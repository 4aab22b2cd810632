import { createHash, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DocumentId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import {
  aCandidate,
  aCase,
  aDocument,
  aHumanLeaderboard,
  createCase,
  generate,
  humanLeaderboard,
  type NewCase,
  type NewDocument,
  type SignedIn,
  signedIn,
  uploadDocument
} from "./support/Builders.ts"
import { expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "documents-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const leaderboard = async () =>
  (await humanLeaderboard(
    owner.api,
    ["d-1", "d-2"].map((path) => aCandidate(`${fake.url}/${path}`, { name: path })),
    aHumanLeaderboard({ name: "docs" })
  )).id
const upload = (leaderboard_id: LeaderboardId, data: string | Uint8Array, overrides: Partial<NewDocument>) =>
  uploadDocument(owner.api, leaderboard_id, aDocument(data, overrides))
const newCase = (leaderboard_id: LeaderboardId, overrides: Partial<NewCase> = {}) =>
  createCase(owner.api, leaderboard_id, aCase({ input: "What applies?", ...overrides }))
const sharedDocuments = async (leaderboard_id: LeaderboardId) =>
  (await owner.api((c) => c.human.documents({ params: { leaderboard_id } }))).documents
const archive = (leaderboard_id: LeaderboardId, document_id: DocumentId) =>
  owner.api((c) => c.human.archiveDocument({ params: { leaderboard_id, document_id } }))

describe("human-evaluation documents", () => {
  it("uploads once: 201, an identical retry 200, the id with other content 409", async () => {
    const id = await leaderboard()
    const docId = DocumentId.make(randomUUID())
    const created = await upload(id, "# Refunds\n30 days", { id: docId, name: "policy.md" })
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
    expect(created.body).not.toHaveProperty("data")
    const retry = await upload(id, "# Refunds\n30 days", { id: docId, name: "policy.md" })
    expect(retry.status).toBe(200)
    expect(retry.body).toEqual(created.body)
    await expectError(upload(id, "# Refunds\n60 days", { id: docId, name: "policy.md" }), 409, "id_reused", "other content")

    const caseId = (await newCase(id)).body.id
    await expectError(upload(id, "x", { id: DocumentId.make(caseId), name: "x.txt" }), 409, "id_reused", "a case's id")
  })

  it("reads txt, md, csv, json and pdf; refuses other files with 400 and oversize ones with 413", async () => {
    const id = await leaderboard()
    const pdf = readFileSync(new URL("../packages/adapters-node/test/fixtures/two-pages.pdf", import.meta.url))
    expect((await upload(id, pdf, { name: "paper.pdf" })).body.media_type).toBe("application/pdf")
    expect((await upload(id, "a,b\n1,2", { name: "rows.csv" })).body.media_type).toBe("text/csv")
    expect((await upload(id, "{\"a\":1}", { name: "data.json" })).body.media_type).toBe("application/json")
    expect((await upload(id, "plain", { name: "notes.txt" })).body.media_type).toBe("text/plain")

    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])
    await expectError(upload(id, png, { name: "image.png" }), 400, "invalid_document", "png")
    await expectError(upload(id, "{nope", { name: "data.json" }), 400, "invalid_document", "bad json")
    // Not base64, which the typed client cannot send.
    const notBase64 = unchecked(podium, "POST", `/api/leaderboards/${id}/human/documents`, {
      token: owner.session,
      json: { id: randomUUID(), scope: "case", name: "a.txt", data: "%%%not base64%%%" }
    })
    await expectValidation(notBase64, ["payload", "data"], "not base64")

    const tooLong = await expectError(upload(id, "x".repeat(200_001), { name: "long.txt" }), 413, "payload_too_large", "text")
    expect(tooLong.error).toMatchObject({ code: "payload_too_large", details: { limit: 200_000 } })
    const bytes = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x41)
    const tooBig = await expectError(upload(id, bytes, { name: "big.txt" }), 413, "payload_too_large", "bytes")
    expect(tooBig.error.details?.["limit"]).toBe(10 * 1024 * 1024)
  })

  it("shared documents go into every new draft until archived; generation sends the documents' text", async () => {
    const id = await leaderboard()
    const shared = await upload(id, "Refunds within 30 days.", { name: "policy.md", scope: "shared" })
    expect(shared.status).toBe(201)
    const own = (await upload(id, "Order 42 was paid on May 1.", { name: "order.txt" })).body
    expect((await sharedDocuments(id)).map((d) => d.id)).toEqual([shared.body.id])

    const withBoth = await newCase(id, { attachment_ids: [own.id] })
    expect(withBoth.status).toBe(201)
    expect(withBoth.body.attachments.map((a) => [a.id, a.scope])).toEqual([
      [own.id, "case"],
      [shared.body.id, "shared"]
    ])
    await generate(owner.api, id, withBoth.body.id)
    expect(fake.seen.at(-1)!.body.messages.at(-1).content).toBe(
      "Document: order.txt\nOrder 42 was paid on May 1.\n\nDocument: policy.md\nRefunds within 30 days.\n\nWhat applies?"
    )

    const archived = await archive(id, shared.body.id)
    expect(archived.archived_at).not.toBeNull()
    expect(await sharedDocuments(id)).toEqual([])
    expect((await newCase(id)).body.attachments).toEqual([])
    const earlier = await owner.api((c) => c.human.getCase({ params: { leaderboard_id: id, case_id: withBoth.body.id } }))
    expect(earlier.attachments).toHaveLength(2)
    const reuse = await expectError(
      upload(id, "Refunds within 30 days.", { id: shared.body.id, name: "policy.md", scope: "shared" }),
      409,
      "id_reused",
      "archived id"
    )
    expect(reuse.error.message).toContain("archived")
    await expectError(archive(id, own.id), 404, "not_found", "a case document")
  })

  it("attachment_ids name only this leaderboard's case documents; a case's documents fit 400,000 characters", async () => {
    const id = await leaderboard()
    const elsewhere = await leaderboard()
    const foreign = (await upload(elsewhere, "a", { name: "a.txt" })).body
    const shared = (await upload(id, "s".repeat(150_000), { name: "s.txt", scope: "shared" })).body
    for (const bad of [foreign.id, shared.id, DocumentId.make(randomUUID())]) {
      const refused = await expectError(newCase(id, { attachment_ids: [bad] }), 400, "validation_failed", bad)
      expect((refused.error.details?.["issues"] as Array<{ path: unknown }>)[0]!.path).toEqual(["payload", "attachment_ids", 0])
    }
    const first = (await upload(id, "1".repeat(150_000), { name: "1.txt" })).body
    const second = (await upload(id, "2".repeat(150_000), { name: "2.txt" })).body
    expect((await newCase(id, { attachment_ids: [first.id] })).status).toBe(201) // 300,000 with the shared one
    const over = await expectError(newCase(id, { attachment_ids: [first.id, second.id] }), 413, "payload_too_large")
    expect(over.error.details?.["limit"]).toBe(400_000)
  })
})
