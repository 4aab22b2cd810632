import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type HumanDocument, HumanCases, HumanDocuments, HumanResults, metadataOf, reviewerView } from "@podium/domain/human"
import { Api } from "../api/Api.ts"
import { CaseView, DocumentView, type SummaryView } from "./HumanApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const encodeCase = Schema.encodeSync(CaseView)
const encodeDocument = Schema.encodeSync(DocumentView)

const documentView = (d: HumanDocument): DocumentView => ({ ...metadataOf(d), created_at: d.created_at, archived_at: d.archived_at })

export const HumanHttp = HttpApiBuilder.group(
  Api,
  "human",
  Effect.fn(function*(handlers) {
    const cases = yield* HumanCases
    const documents = yield* HumanDocuments
    const results = yield* HumanResults
    return handlers
      .handle("summary", ({ params, query }) =>
        Effect.gen(function*() {
          const s = yield* results.summary(yield* CurrentPrincipal, params.leaderboard_id, query.offset ?? 0)
          return {
            ...s,
            cohort: s.cohort.map(({ id, model_name, name, platform }) => ({ leaderboard_model_id: id, name, platform, model_name }))
          } satisfies typeof SummaryView.Type
        }).pipe(mapDomainErrors))
      .handle("export", ({ params }) =>
        Effect.gen(function*() {
          const rows = yield* results.exportRows(yield* CurrentPrincipal, params.leaderboard_id)
          return rows.map(({ configuration: _, ...row }) => row)
        }).pipe(mapDomainErrors))
      .handle("documents", ({ params }) =>
        Effect.gen(function*() {
          const shared = yield* documents.shared(yield* CurrentPrincipal, params.leaderboard_id)
          return { documents: shared.map(documentView) }
        }).pipe(mapDomainErrors))
      .handle("uploadDocument", ({ params, payload }) =>
        Effect.gen(function*() {
          const { created, document } = yield* documents.upload(yield* CurrentPrincipal, params.leaderboard_id, payload)
          return HttpServerResponse.jsonUnsafe(encodeDocument(documentView(document)), { status: created ? 201 : 200 })
        }).pipe(mapDomainErrors))
      .handle("archiveDocument", ({ params }) =>
        Effect.gen(function*() {
          return documentView(yield* documents.archive(yield* CurrentPrincipal, params.leaderboard_id, params.document_id))
        }).pipe(mapDomainErrors))
      .handle("createCase", ({ params, payload }) =>
        Effect.gen(function*() {
          const { created, detail } = yield* cases.create(yield* CurrentPrincipal, params.leaderboard_id, payload)
          // 201 for a new case, 200 for an identical retry: one schema, two statuses
          return HttpServerResponse.jsonUnsafe(encodeCase(reviewerView(detail)), { status: created ? 201 : 200 })
        }).pipe(mapDomainErrors))
      .handle("getCase", ({ params }) =>
        Effect.gen(function*() {
          return reviewerView(yield* cases.get(yield* CurrentPrincipal, params.leaderboard_id, params.case_id))
        }).pipe(mapDomainErrors))
      .handle("saveConfig", ({ params, payload }) =>
        Effect.gen(function*() {
          return reviewerView(yield* cases.saveConfig(yield* CurrentPrincipal, params.leaderboard_id, params.case_id, payload))
        }).pipe(mapDomainErrors))
      .handle("generate", ({ params }) =>
        Effect.gen(function*() {
          return reviewerView(yield* cases.generate(yield* CurrentPrincipal, params.leaderboard_id, params.case_id))
        }).pipe(mapDomainErrors))
      .handle("saveReview", ({ params, payload }) =>
        Effect.gen(function*() {
          return reviewerView(yield* cases.saveReview(yield* CurrentPrincipal, params.leaderboard_id, params.case_id, payload))
        }).pipe(mapDomainErrors))
  })
)
