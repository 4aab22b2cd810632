import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CaseId, DocumentId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { CaseView } from "@podium/adapters-http/human/HumanApi"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import {
  aCandidate,
  aDocument,
  aHumanLeaderboard,
  createCase,
  generate,
  humanLeaderboard,
  type NewCase,
  type NewDocument,
  type SignedIn,
  signedIn,
  uploadDocument,
  verdictsOn
} from "./support/Builders.ts"
import { expectError } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let a: SignedIn
let b: SignedIn

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  a = await signedIn(podium, "subject-a")
  b = await signedIn(podium, "subject-b")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

/** A human leaderboard in the subject's own workspace, with two candidates answering at the fake. */
const leaderboard = async (who: SignedIn) =>
  (await humanLeaderboard(
    who.api,
    ["ids-1", "ids-2"].map((path) => aCandidate(`${fake.url}/${path}`, { name: path })),
    aHumanLeaderboard({ name: "ids", system_prompt: "Answer briefly." })
  )).id

const upload = (who: SignedIn, lb: LeaderboardId, data: string, document: Partial<NewDocument>) =>
  uploadDocument(who.api, lb, aDocument(data, document))
const newCase = (who: SignedIn, lb: LeaderboardId, payload: NewCase) => createCase(who.api, lb, payload)
const getCase = (who: SignedIn, leaderboard_id: LeaderboardId, case_id: CaseId) =>
  who.api((c) => c.human.getCase({ params: { leaderboard_id, case_id } }))
const review = (who: SignedIn, leaderboard_id: LeaderboardId, c: CaseView, confirm: boolean, reference: string) =>
  who.api((client) =>
    client.human.saveReview({
      params: { leaderboard_id, case_id: c.id },
      payload: { revision: c.revision, confirm, review: { verdicts: confirm ? verdictsOn(c.responses, "correct") : {}, reference, notes: "" } }
    })
  )
const summary = (who: SignedIn, leaderboard_id: LeaderboardId) =>
  who.api((c) => c.human.summary({ params: { leaderboard_id }, query: {} }))
const sharedDocuments = async (who: SignedIn, leaderboard_id: LeaderboardId) =>
  (await who.api((c) => c.human.documents({ params: { leaderboard_id } }))).documents

describe("client ids of cases and documents are unique per workspace", () => {
  it("two workspaces use the same case and document ids independently; within one, reuse is still refused", async () => {
    const lbA = await leaderboard(a)
    const lbB = await leaderboard(b)
    const docId = DocumentId.make(randomUUID())
    const sharedId = DocumentId.make(randomUUID())
    const caseId = CaseId.make(randomUUID())

    // the same document ids in both workspaces, with different content
    const docA = await upload(a, lbA, "Order A was paid.", { id: docId, name: "a.txt" })
    const docB = await upload(b, lbB, "Order B was refunded.", { id: docId, name: "b.txt" })
    expect([docA.status, docB.status]).toEqual([201, 201])
    expect([docA.body.name, docB.body.name]).toEqual(["a.txt", "b.txt"])
    const sharedA = await upload(a, lbA, "A: 30 days.", { id: sharedId, name: "policy-a.md", scope: "shared" })
    const sharedB = await upload(b, lbB, "B: 60 days.", { id: sharedId, name: "policy-b.md", scope: "shared" })
    expect([sharedA.status, sharedB.status]).toEqual([201, 201])

    // the same case id in both workspaces, each with its own input and documents
    const caseA = await newCase(a, lbA, { id: caseId, input: "Question A?", attachment_ids: [docId] })
    const caseB = await newCase(b, lbB, { id: caseId, input: "Question B?", attachment_ids: [docId] })
    expect([caseA.status, caseB.status]).toEqual([201, 201])
    expect(await getCase(a, lbA, caseId)).toMatchObject({ id: caseId, input: "Question A?" })
    expect(await getCase(b, lbB, caseId)).toMatchObject({ id: caseId, input: "Question B?" })
    expect((await getCase(a, lbA, caseId)).attachments.map((d) => d.name)).toEqual(["a.txt", "policy-a.md"])
    expect((await getCase(b, lbB, caseId)).attachments.map((d) => d.name)).toEqual(["b.txt", "policy-b.md"])
    // one workspace cannot reach the other's case through its own leaderboard
    await expectError(getCase(a, lbB, caseId), 404, "not_found", "the other's case")

    // within one workspace: an identical retry replays, other content or the other kind is refused
    expect((await upload(a, lbA, "Order A was paid.", { id: docId, name: "a.txt" })).status).toBe(200)
    await expectError(upload(a, lbA, "Order B was refunded.", { id: docId, name: "a.txt" }), 409, "id_reused", "other content")
    expect((await newCase(a, lbA, { id: caseId, input: "Question A?", attachment_ids: [docId] })).status).toBe(200)
    const changed = newCase(a, lbA, { id: caseId, input: "Question B?", attachment_ids: [docId] })
    await expectError(changed, 409, "id_reused", "changed case")
    await expectError(upload(a, lbA, "x", { id: DocumentId.make(caseId), name: "x.txt" }), 409, "id_reused", "case as document")
    await expectError(newCase(b, lbB, { id: CaseId.make(docId), input: "Question B?" }), 409, "id_reused", "document as case")
    // a second leaderboard of the same workspace shares its ids
    const lbA2 = await leaderboard(a)
    await expectError(newCase(a, lbA2, { id: caseId, input: "Question A?" }), 409, "id_reused", "second leaderboard")

    // each generation answers from its own workspace's documents
    const generatedA = await generate(a.api, lbA, caseId)
    for (const r of generatedA.responses) {
      expect(r.output).toBe("echo: Document: a.txt\nOrder A was paid.\n\nDocument: policy-a.md\nA: 30 days.\n\nQuestion A?")
    }
    expect(await getCase(b, lbB, caseId)).toMatchObject({ status: "draft", responses: [] })
    const generatedB = await generate(b.api, lbB, caseId)
    for (const r of generatedB.responses) {
      expect(r.output).toBe("echo: Document: b.txt\nOrder B was refunded.\n\nDocument: policy-b.md\nB: 60 days.\n\nQuestion B?")
    }
    const responseIds = (c: CaseView): Array<string> => c.responses.map((r) => r.id)
    expect(responseIds(generatedA).some((id) => responseIds(generatedB).includes(id))).toBe(false)

    // reviews and their history stay in their workspace
    const reviewedA = await review(a, lbA, generatedA, true, "A's reference")
    expect(reviewedA.history).toHaveLength(1)
    const afterA = await getCase(b, lbB, caseId)
    expect(afterA).toMatchObject({ review_state: "none", history: [] })
    expect(afterA.responses).toHaveLength(2)
    expect(afterA.responses.every((r) => r.model === null)).toBe(true)
    await review(b, lbB, generatedB, false, "B's draft")
    expect(await getCase(a, lbA, caseId)).toMatchObject({
      review_state: "confirmed",
      review: { reference: "A's reference" },
      history: [{ confirmed: true }]
    })
    expect(await getCase(b, lbB, caseId)).toMatchObject({ review_state: "draft", history: [{ confirmed: false }] })
    expect(await summary(a, lbA)).toMatchObject({ total: 1, pending: 0 })
    expect(await summary(b, lbB)).toMatchObject({ total: 1, pending: 1 })

    // archiving A's shared document leaves B's active
    await a.api((c) => c.human.archiveDocument({ params: { leaderboard_id: lbA, document_id: sharedId } }))
    expect(await sharedDocuments(a, lbA)).toEqual([])
    expect((await sharedDocuments(b, lbB)).map((d) => d.id)).toEqual([sharedId])

    // deleting A's leaderboard, then A's whole workspace, leaves B's case, responses, history and documents
    await a.api((c) => c.leaderboards.remove({ params: { leaderboard_id: lbA } }))
    await expectError(getCase(a, lbA, caseId), 404, "not_found", "deleted leaderboard")
    await query(podium.databaseUrl, (sql) => sql`DELETE FROM workspaces WHERE id = ${a.workspace}`)
    const left = await query(podium.databaseUrl, (sql) =>
      sql`SELECT (SELECT count(*)::int FROM human_cases WHERE id = ${caseId}) AS cases,
                 (SELECT count(*)::int FROM human_documents WHERE id = ${docId}) AS documents`)
    expect(left[0]).toEqual({ cases: 1, documents: 1 })
    const stillB = await getCase(b, lbB, caseId)
    expect(stillB).toMatchObject({ input: "Question B?", review_state: "draft", history: [{ confirmed: false }] })
    expect(stillB.responses).toHaveLength(2)
    const confirmedB = await review(b, lbB, stillB, true, "B's reference")
    expect(confirmedB.history.map((h) => h.confirmed)).toEqual([true, false])
  })
})
