import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import {
  type CaseResponse,
  type HumanDocument,
  type CaseDetail,
  HumanEvaluation,
} from "@podium/domain/human"
import { Api } from "../api/Api.ts"
import { CaseView, DocumentView, type SummaryView } from "../api/HumanApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "./ErrorMapping.ts"

/**
 * A case as the reviewer may see it: until its review is first confirmed, a response is its label
 * and answer only (no model, no cost, and for a failure no reason, which may name the model).
 */
export const caseView = ({ case: c, current, history, response_total, responses }: CaseDetail): CaseView => {
  const stage = c.stage
  const revealed = stage._tag === "Generated" && stage.revealed_at !== null
  const response = (r: CaseResponse) => ({
    id: r.response_id,
    label: r.label,
    status: r.status,
    output: r.output,
    error: r.error === null ? null : revealed ? r.error : "The provider failed to answer",
    latency_ms: r.latency_ms,
    created_at: r.created_at,
    model: revealed
      ? { leaderboard_model_id: r.candidate_id, name: r.candidate_name, platform: r.platform, model_name: r.model_name }
      : null,
    cost_usd: revealed ? r.cost_usd : null
  })
  const review = stage._tag !== "Generated" || stage.review._tag === "Unreviewed"
    ? null
    : stage.review._tag === "Confirmed"
    ? { state: "confirmed" as const, ...pick(stage.review), saved_at: stage.review.confirmed_at }
    : { state: "draft" as const, ...pick(stage.review), saved_at: stage.review.saved_at }
  return {
    id: c.id,
    leaderboard_id: c.leaderboard_id,
    status: stage._tag === "Draft" ? "draft" : stage._tag === "Generating" ? "generating" : "generated",
    review_state: review === null ? "none" : review.state,
    revision: c.revision,
    input: c.input,
    context: c.context,
    prompt_override: c.prompt_override,
    prompt: c.prompt,
    attachments: c.attachments.map(({ id, media_type, name, scope, sha256, size_bytes }) => ({ id, name, scope, media_type, size_bytes, sha256 })),
    current,
    responses: responses.map(response),
    response_total,
    review,
    history: history.map((h) => ({ revision: h.revision, confirmed: h.confirmed, ...pick(h.review), saved_by: h.saved_by, saved_at: h.saved_at })),
    created_at: c.created_at,
    updated_at: c.updated_at,
    generated_at: stage._tag === "Generated" ? stage.generated_at : null
  }
}

const pick = (r: { readonly verdicts: Record<string, "correct" | "incorrect" | "abstain">; readonly reference: string; readonly notes: string }) => ({
  verdicts: r.verdicts,
  reference: r.reference,
  notes: r.notes
})

const encodeCase = Schema.encodeSync(CaseView)
const encodeDocument = Schema.encodeSync(DocumentView)

const documentView = (d: HumanDocument): DocumentView => ({
  id: d.id,
  name: d.name,
  scope: d.scope,
  media_type: d.media_type,
  size_bytes: d.size_bytes,
  sha256: d.sha256,
  created_at: d.created_at,
  archived_at: d.archived_at
})

export const HumanHttp = HttpApiBuilder.group(
  Api,
  "human",
  Effect.fn(function*(handlers) {
    const human = yield* HumanEvaluation
    return handlers
      .handle("summary", ({ params, query }) =>
        Effect.gen(function*() {
          const s = yield* human.summary(yield* CurrentPrincipal, params.leaderboard_id, query.offset ?? 0)
          return {
            ...s,
            cohort: s.cohort.map(({ id, model_name, name, platform }) => ({ leaderboard_model_id: id, name, platform, model_name }))
          } satisfies typeof SummaryView.Type
        }).pipe(mapDomainErrors))
      .handle("export", ({ params }) =>
        Effect.gen(function*() {
          const rows = yield* human.exportRows(yield* CurrentPrincipal, params.leaderboard_id)
          return rows.map(({ configuration: _, ...row }) => row)
        }).pipe(mapDomainErrors))
      .handle("documents", ({ params }) =>
        Effect.gen(function*() {
          const shared = yield* human.sharedDocuments(yield* CurrentPrincipal, params.leaderboard_id)
          return { documents: shared.map(documentView) }
        }).pipe(mapDomainErrors))
      .handle("uploadDocument", ({ params, payload }) =>
        Effect.gen(function*() {
          const { created, document } = yield* human.uploadDocument(yield* CurrentPrincipal, params.leaderboard_id, payload)
          return HttpServerResponse.jsonUnsafe(encodeDocument(documentView(document)), { status: created ? 201 : 200 })
        }).pipe(mapDomainErrors))
      .handle("archiveDocument", ({ params }) =>
        Effect.gen(function*() {
          return documentView(yield* human.archiveDocument(yield* CurrentPrincipal, params.leaderboard_id, params.document_id))
        }).pipe(mapDomainErrors))
      .handle("createCase", ({ params, payload }) =>
        Effect.gen(function*() {
          const { created, detail } = yield* human.createCase(yield* CurrentPrincipal, params.leaderboard_id, payload)
          // 201 for a new case, 200 for an identical retry: one schema, two statuses
          return HttpServerResponse.jsonUnsafe(encodeCase(caseView(detail)), { status: created ? 201 : 200 })
        }).pipe(mapDomainErrors))
      .handle("getCase", ({ params }) =>
        Effect.gen(function*() {
          return caseView(yield* human.getCase(yield* CurrentPrincipal, params.leaderboard_id, params.case_id))
        }).pipe(mapDomainErrors))
      .handle("saveConfig", ({ params, payload }) =>
        Effect.gen(function*() {
          return caseView(yield* human.saveConfig(yield* CurrentPrincipal, params.leaderboard_id, params.case_id, payload))
        }).pipe(mapDomainErrors))
      .handle("generate", ({ params }) =>
        Effect.gen(function*() {
          return caseView(yield* human.generate(yield* CurrentPrincipal, params.leaderboard_id, params.case_id))
        }).pipe(mapDomainErrors))
      .handle("saveReview", ({ params, payload }) =>
        Effect.gen(function*() {
          return caseView(yield* human.saveReview(yield* CurrentPrincipal, params.leaderboard_id, params.case_id, payload))
        }).pipe(mapDomainErrors))
  })
)
