import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let a: string
let b: string

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  a = await session("subject-a")
  b = await session("subject-b")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const H = (id: string) => `/api/leaderboards/${id}/human`
const b64 = (text: string) => Buffer.from(text).toString("base64")

/** A human leaderboard in the subject's own workspace, with two candidates answering at the fake. */
const leaderboard = async (token: string) => {
  const id = (await podium.request("POST", "/api/leaderboards", {
    token,
    json: { name: "ids", eval_type: "human", dataset_type: "PUSH", system_prompt: "Answer briefly." }
  })).body.leaderboard.id as string
  for (const path of ["ids-1", "ids-2"]) {
    const reply = await podium.request("POST", `/api/leaderboards/${id}/models`, {
      token,
      json: { name: path, platform: "Custom", url: `${fake.url}/${path}`, auth_type: "none" }
    })
    expect(reply.status).toBe(201)
  }
  return id
}

const upload = (token: string, lb: string, json: Record<string, unknown>) =>
  podium.request("POST", `${H(lb)}/documents`, { token, json: { scope: "case", ...json } })
const newCase = (token: string, lb: string, json: Record<string, unknown>) =>
  podium.request("POST", `${H(lb)}/cases`, { token, json })
const getCase = (token: string, lb: string, caseId: string) =>
  podium.request("GET", `${H(lb)}/cases/${caseId}`, { token })
const generate = (token: string, lb: string, caseId: string) =>
  podium.request("POST", `${H(lb)}/cases/${caseId}/generate`, { token, json: {} })
const confirmAll = (token: string, lb: string, c: { id: string; revision: number; responses: Array<{ id: string }> }, reference: string) =>
  podium.request("PUT", `${H(lb)}/cases/${c.id}/review`, {
    token,
    json: {
      revision: c.revision,
      confirm: true,
      review: { verdicts: Object.fromEntries(c.responses.map((r) => [r.id, "correct"])), reference, notes: "" }
    }
  })
const workspaceOf = async (lb: string) =>
  (await query(podium.databaseUrl, (sql) => sql`SELECT workspace_id::text AS id FROM leaderboards WHERE id = ${lb}`))[0]!["id"] as string

describe("client ids of cases and documents are unique per workspace", () => {
  it("two workspaces use the same case and document ids independently; within one, reuse is still refused", async () => {
    const lbA = await leaderboard(a)
    const lbB = await leaderboard(b)
    const docId = crypto.randomUUID()
    const sharedId = crypto.randomUUID()
    const caseId = crypto.randomUUID()

    // the same document ids in both workspaces, with different content
    const docA = await upload(a, lbA, { id: docId, name: "a.txt", data: b64("Order A was paid.") })
    const docB = await upload(b, lbB, { id: docId, name: "b.txt", data: b64("Order B was refunded.") })
    expect([docA.status, docB.status]).toEqual([201, 201])
    expect([docA.body.name, docB.body.name]).toEqual(["a.txt", "b.txt"])
    const sharedA = await upload(a, lbA, { id: sharedId, name: "policy-a.md", scope: "shared", data: b64("A: 30 days.") })
    const sharedB = await upload(b, lbB, { id: sharedId, name: "policy-b.md", scope: "shared", data: b64("B: 60 days.") })
    expect([sharedA.status, sharedB.status]).toEqual([201, 201])

    // the same case id in both workspaces, each with its own input and documents
    const caseA = await newCase(a, lbA, { id: caseId, input: "Question A?", attachment_ids: [docId] })
    const caseB = await newCase(b, lbB, { id: caseId, input: "Question B?", attachment_ids: [docId] })
    expect([caseA.status, caseB.status]).toEqual([201, 201])
    expect((await getCase(a, lbA, caseId)).body).toMatchObject({ id: caseId, input: "Question A?" })
    expect((await getCase(b, lbB, caseId)).body).toMatchObject({ id: caseId, input: "Question B?" })
    expect((await getCase(a, lbA, caseId)).body.attachments.map((d: { name: string }) => d.name)).toEqual(["a.txt", "policy-a.md"])
    expect((await getCase(b, lbB, caseId)).body.attachments.map((d: { name: string }) => d.name)).toEqual(["b.txt", "policy-b.md"])
    // one workspace cannot reach the other's case through its own leaderboard
    expect((await getCase(a, lbB, caseId)).status).toBe(404)

    // within one workspace: an identical retry replays, other content or the other kind is refused
    expect((await upload(a, lbA, { id: docId, name: "a.txt", data: b64("Order A was paid.") })).status).toBe(200)
    expect((await upload(a, lbA, { id: docId, name: "a.txt", data: b64("Order B was refunded.") })).body.error.code).toBe("id_reused")
    expect((await newCase(a, lbA, { id: caseId, input: "Question A?", attachment_ids: [docId] })).status).toBe(200)
    const changed = await newCase(a, lbA, { id: caseId, input: "Question B?", attachment_ids: [docId] })
    expect(changed.status).toBe(409)
    expect(changed.body.error.code).toBe("id_reused")
    const caseAsDocument = await upload(a, lbA, { id: caseId, name: "x.txt", data: b64("x") })
    expect(caseAsDocument.status).toBe(409)
    expect(caseAsDocument.body.error.code).toBe("id_reused")
    const documentAsCase = await newCase(b, lbB, { id: docId, input: "Question B?" })
    expect(documentAsCase.status).toBe(409)
    expect(documentAsCase.body.error.code).toBe("id_reused")
    // a second leaderboard of the same workspace shares its ids
    const lbA2 = await leaderboard(a)
    expect((await newCase(a, lbA2, { id: caseId, input: "Question A?" })).body.error.code).toBe("id_reused")

    // each generation answers from its own workspace's documents
    const generatedA = await generate(a, lbA, caseId)
    expect(generatedA.status).toBe(200)
    for (const r of generatedA.body.responses) {
      expect(r.output).toBe("echo: Document: a.txt\nOrder A was paid.\n\nDocument: policy-a.md\nA: 30 days.\n\nQuestion A?")
    }
    expect((await getCase(b, lbB, caseId)).body).toMatchObject({ status: "draft", responses: [] })
    const generatedB = await generate(b, lbB, caseId)
    expect(generatedB.status).toBe(200)
    for (const r of generatedB.body.responses) {
      expect(r.output).toBe("echo: Document: b.txt\nOrder B was refunded.\n\nDocument: policy-b.md\nB: 60 days.\n\nQuestion B?")
    }
    const responseIds = (c: { responses: Array<{ id: string }> }) => c.responses.map((r) => r.id)
    expect(responseIds(generatedA.body).some((id) => responseIds(generatedB.body).includes(id))).toBe(false)

    // reviews and their history stay in their workspace
    const reviewedA = await confirmAll(a, lbA, generatedA.body, "A's reference")
    expect(reviewedA.status).toBe(200)
    expect(reviewedA.body.history).toHaveLength(1)
    const afterA = (await getCase(b, lbB, caseId)).body
    expect(afterA).toMatchObject({ review_state: "none", history: [] })
    expect(afterA.responses).toHaveLength(2)
    expect(afterA.responses.every((r: { model: unknown }) => r.model === null)).toBe(true)
    const reviewedB = await podium.request("PUT", `${H(lbB)}/cases/${caseId}/review`, {
      token: b,
      json: { revision: generatedB.body.revision, confirm: false, review: { verdicts: {}, reference: "B's draft", notes: "" } }
    })
    expect(reviewedB.status).toBe(200)
    expect((await getCase(a, lbA, caseId)).body).toMatchObject({
      review_state: "confirmed",
      review: { reference: "A's reference" },
      history: [{ confirmed: true }]
    })
    expect((await getCase(b, lbB, caseId)).body).toMatchObject({ review_state: "draft", history: [{ confirmed: false }] })
    expect((await podium.request("GET", `${H(lbA)}/`, { token: a })).body).toMatchObject({ total: 1, pending: 0 })
    expect((await podium.request("GET", `${H(lbB)}/`, { token: b })).body).toMatchObject({ total: 1, pending: 1 })

    // archiving A's shared document leaves B's active
    expect((await podium.request("DELETE", `${H(lbA)}/documents/${sharedId}`, { token: a })).status).toBe(200)
    expect((await podium.request("GET", `${H(lbA)}/documents`, { token: a })).body.documents).toEqual([])
    expect((await podium.request("GET", `${H(lbB)}/documents`, { token: b })).body.documents.map((d: { id: string }) => d.id))
      .toEqual([sharedId])

    // deleting A's leaderboard, then A's whole workspace, leaves B's case, responses, history and documents
    expect((await podium.request("DELETE", `/api/leaderboards/${lbA}`, { token: a })).status).toBe(200)
    expect((await getCase(a, lbA, caseId)).status).toBe(404)
    const workspaceA = await workspaceOf(lbA)
    await query(podium.databaseUrl, (sql) => sql`DELETE FROM workspaces WHERE id = ${workspaceA}`)
    const left = await query(podium.databaseUrl, (sql) =>
      sql`SELECT (SELECT count(*)::int FROM human_cases WHERE id = ${caseId}) AS cases,
                 (SELECT count(*)::int FROM human_documents WHERE id = ${docId}) AS documents`)
    expect(left[0]).toEqual({ cases: 1, documents: 1 })
    const stillB = await getCase(b, lbB, caseId)
    expect(stillB.status).toBe(200)
    expect(stillB.body).toMatchObject({ input: "Question B?", review_state: "draft", history: [{ confirmed: false }] })
    expect(stillB.body.responses).toHaveLength(2)
    const confirmedB = await confirmAll(b, lbB, stillB.body, "B's reference")
    expect(confirmedB.status).toBe(200)
    expect(confirmedB.body.history.map((h: { confirmed: boolean }) => h.confirmed)).toEqual([true, false])
  })
})
