import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Platform, CandidateId, LeaderboardId, ServingDecision } from "@podium/domain/leaderboards"
import {
  CaseId,
  DocumentId,
  DocumentMetadata,
  DocumentScope,
  limits,
  ResponseId,
  ResponseStatus,
  Verdict,
} from "@podium/domain/human"
import { NotFound, PayloadTooLarge } from "../api/Errors.ts"
import {
  CaseNotGenerated,
  ConfigurationChanged,
  GenerationInProgress,
  IdReused,
  ImmutableCase,
  InvalidCandidateCount,
  InvalidDocument,
  InvalidVerdicts,
  StaleRevision,
  WrongEvalType
} from "./HumanErrors.ts"
import { NullableTimestamp, Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

export const CaseCreateRequest = Schema.Struct({
  id: CaseId.annotate({ description: "Client-generated UUID; a retry with the same id and payload answers 200" }),
  input: Text(limits.caseText).check(Schema.isPattern(/\S/, { message: "Expected a non-blank string" })),
  context: Schema.optionalKey(Text(limits.caseText)),
  prompt_override: Schema.optionalKey(Schema.NullOr(Text(limits.caseText)).annotate({
    description: "Omitted or null inherits the leaderboard's base prompt; \"\" is an intentional empty prompt"
  })),
  attachment_ids: Schema.optionalKey(Schema.Array(DocumentId))
})

export const ConfigRequest = Schema.Struct({
  revision: Schema.Int,
  prompt_override: Schema.NullOr(Text(limits.caseText)).annotate({ description: "null restores the base prompt" })
})

export const ReviewRequest = Schema.Struct({
  revision: Schema.Int,
  confirm: Schema.Boolean,
  review: Schema.Struct({
    verdicts: Schema.Record(ResponseId, Verdict).annotate({ description: "By response id (responses are blind)" }),
    reference: Text(limits.reviewReference),
    notes: Text(limits.reviewNotes)
  })
})

export const DocumentUploadRequest = Schema.Struct({
  id: DocumentId.annotate({ description: "Client-generated UUID, distinct from case ids" }),
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({ description: "The file name" }),
  scope: DocumentScope,
  data: Schema.Uint8ArrayFromBase64.annotate({ description: "The file's bytes, base64 (no data-URL prefix)" })
})

export const DocumentView = Schema.Struct({
  ...DocumentMetadata.fields,
  created_at: Timestamp,
  archived_at: NullableTimestamp
}).annotate({ identifier: "HumanDocument" })
export type DocumentView = typeof DocumentView.Type

const AttachmentView = DocumentMetadata

const ModelView = Schema.Struct({
  leaderboard_model_id: CandidateId,
  name: Schema.String,
  platform: Platform,
  model_name: Schema.NullOr(Schema.String)
})

export const ResponseView = Schema.Struct({
  id: ResponseId,
  label: Schema.String.annotate({ description: "A, B, …: a per-case shuffled blind label" }),
  status: ResponseStatus,
  output: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String).annotate({
    description: "Why the provider failed; until confirmation only that it failed, as the reason may name the model"
  }),
  latency_ms: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  model: Schema.NullOr(ModelView).annotate({ description: "null until the case's review is first confirmed" }),
  cost_usd: Schema.NullOr(Schema.Number).annotate({ description: "null until revealed, or when unknown" })
}).annotate({ identifier: "HumanResponse" })

const ReviewView = Schema.Struct({
  state: Schema.Literals(["draft", "confirmed"]),
  verdicts: Schema.Record(Schema.String, Verdict),
  reference: Schema.String,
  notes: Schema.String,
  saved_at: Timestamp
})

const HistoryView = Schema.Struct({
  revision: Schema.Int,
  confirmed: Schema.Boolean,
  verdicts: Schema.Record(Schema.String, Verdict),
  reference: Schema.String,
  notes: Schema.String,
  saved_by: Schema.NullOr(Schema.String),
  saved_at: Timestamp
})

export const CaseView = Schema.Struct({
  id: CaseId,
  leaderboard_id: LeaderboardId,
  status: Schema.Literals(["draft", "generating", "generated"]),
  review_state: Schema.Literals(["none", "draft", "confirmed"]),
  revision: Schema.Int,
  input: Schema.String,
  context: Schema.String,
  prompt_override: Schema.NullOr(Schema.String),
  prompt: Schema.String.annotate({ description: "The saved prompt the candidates get" }),
  attachments: Schema.Array(AttachmentView),
  current: Schema.Boolean.annotate({ description: "Made under the leaderboard's current candidates and base prompt" }),
  responses: Schema.Array(ResponseView),
  response_total: Schema.Int.annotate({ description: "Responses the generation makes; poll until succeeded + failed reach it" }),
  review: Schema.NullOr(ReviewView),
  history: Schema.Array(HistoryView).annotate({ description: "Up to 100 review saves, newest first" }),
  created_at: Timestamp,
  updated_at: Timestamp,
  generated_at: NullableTimestamp
}).annotate({ identifier: "HumanCase" })
export type CaseView = typeof CaseView.Type

const RankingRowView = Schema.Struct({
  leaderboard_model_id: Schema.String,
  name: Schema.String,
  correct: Schema.Int,
  total: Schema.Int,
  score: Schema.NullOr(Schema.Number),
  score_low: Schema.NullOr(Schema.Number).annotate({ description: "Wilson 95% interval, low end" }),
  score_high: Schema.NullOr(Schema.Number).annotate({ description: "Wilson 95% interval, high end" }),
  rank: Schema.NullOr(Schema.Int),
  average_cost_usd: Schema.NullOr(Schema.Number),
  total_cost_usd: Schema.Number,
  cost_samples: Schema.Int,
  cost_missing: Schema.Int,
  technical_errors: Schema.Int
})

const PairedDifferenceView = Schema.Struct({
  estimate: Schema.Number,
  low: Schema.Number.annotate({ description: "Newcombe's 95% interval (method 10), low end" }),
  high: Schema.Number.annotate({ description: "Newcombe's 95% interval (method 10), high end" })
})

const PairedView = Schema.Struct({
  alpha: Schema.Number.annotate({ description: "The leaderboard's serving policy alpha, at which pairs are told apart" }),
  candidates: Schema.Array(Schema.Struct({
    leaderboard_model_id: Schema.String,
    statistically_tied_with: Schema.Array(Schema.String).annotate({
      description: "The other candidates whose pair with this one has p_adjusted >= alpha, in cohort order"
    }),
    rank_band: Schema.Struct({
      best: Schema.Int.annotate({ description: "1 + the number of candidates significantly better" }),
      worst: Schema.Int.annotate({ description: "The number of candidates − the number significantly worse" })
    })
  })).annotate({ description: "One per candidate of the cohort, in cohort order" }),
  pairwise: Schema.Array(Schema.Struct({
    a: Schema.String,
    b: Schema.String,
    wins: Schema.Int.annotate({ description: "Common cases a got right and b wrong" }),
    losses: Schema.Int.annotate({ description: "Common cases a got wrong and b right" }),
    ties: Schema.Int.annotate({ description: "Common cases both got right or both got wrong" }),
    p_value: Schema.Number.annotate({ description: "Exact McNemar test of wins against losses (two-sided binomial, p = 1/2)" }),
    p_adjusted: Schema.Number.annotate({ description: "Holm-adjusted over every pair" }),
    difference: Schema.NullOr(PairedDifferenceView).annotate({
      description: "a's score minus b's over the common cases; null when there are none"
    })
  })).annotate({ description: "Every unordered pair of the cohort once, a before b in cohort order" })
}).annotate({
  description: "The candidates compared pair by pair over the common rows' cases (confirmed cases in which every " +
    "candidate has one correct/incorrect verdict), matched by case"
})

export const SummaryView = Schema.Struct({
  default_prompt: Schema.String,
  cohort: Schema.Array(ModelView).annotate({ description: "The candidates of the current configuration" }),
  candidate_count: Schema.Int,
  ranking: Schema.Struct({
    rows: Schema.Array(RankingRowView),
    common_rows: Schema.Array(RankingRowView),
    confirmed: Schema.Int,
    comparable: Schema.Int,
    paired: PairedView
  }),
  serving_decision: ServingDecision.annotate({
    identifier: "HumanServingDecision",
    description: "What the leaderboard's serving policy decides now on the common rows, with the ranking's winner " +
      "(`ranking_winner`) as the serving candidate: `first` when none serves yet (the best score, the cheapest among " +
      "those statistically tied with it), `switch` only on at least `min_rows` common cases and the policy's evidence, " +
      "else `keep`; `none` when no candidate has a score. Confirming a review applies the same rule, so the ranking's " +
      "winner changes only on `first` or `switch`."
  }),
  total: Schema.Int,
  pending: Schema.Int,
  current_pending: Schema.Int,
  next_pending_case: Schema.NullOr(CaseId),
  cases: Schema.Array(Schema.Struct({
    id: CaseId,
    status: Schema.Literals(["draft", "generating", "generated"]),
    review_state: Schema.Literals(["none", "draft", "confirmed"]),
    revision: Schema.Int,
    input: Schema.String.annotate({ description: "The first 200 characters" }),
    current: Schema.Boolean,
    created_at: Timestamp,
    updated_at: Timestamp
  })),
  next_offset: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "HumanSummary" })

export const ExportRowView = Schema.Struct({
  case_id: CaseId,
  input: Schema.String,
  context: Schema.String,
  prompt: Schema.String.annotate({ description: "The saved prompt the candidates got" }),
  reference: Schema.String,
  notes: Schema.String,
  accepted_answers: Schema.Array(Schema.Struct({
    response_id: ResponseId,
    leaderboard_model_id: Schema.String,
    name: Schema.String,
    model_name: Schema.NullOr(Schema.String),
    output: Schema.NullOr(Schema.String)
  })).annotate({ description: "Responses with the verdict `correct`" }),
  attachments: Schema.Array(AttachmentView).annotate({ description: "Metadata and sha256 only, never the bytes" }),
  current: Schema.Boolean.annotate({ description: "Made under the leaderboard's current configuration" }),
  confirmed_at: Timestamp
}).annotate({ identifier: "HumanExportRow" })

const LeaderboardParams = { leaderboard_id: LeaderboardId }
const DocumentParams = { leaderboard_id: LeaderboardId, document_id: DocumentId }
const CaseParams = { leaderboard_id: LeaderboardId, case_id: CaseId }
const base = "/api/leaderboards/:leaderboard_id/human"
/** The leaderboard is not visible, or not set up for human evaluation: on every route of the group. */
const errors = [NotFound, WrongEvalType, InvalidCandidateCount]

export class HumanApi extends HttpApiGroup.make("human")
  .add(
    HttpApiEndpoint.get("summary", `${base}/`, {
      params: LeaderboardParams,
      query: {
        offset: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)))
      },
      success: SummaryView,
      error: errors
    }).annotate(OpenApi.Summary, "Ranking, pending counts and a page of 50 cases"),
    HttpApiEndpoint.get("export", `${base}/export`, {
      params: LeaderboardParams,
      success: Schema.Array(ExportRowView),
      error: errors
    }).annotate(OpenApi.Summary, "Reference rows of every confirmed case, as one JSON array").annotate(
      OpenApi.Description,
      "Confirmed cases of every configuration, oldest first; a case with neither a reference nor an accepted answer " +
        "yields no row. Document bytes and text are never included."
    ),
    HttpApiEndpoint.get("documents", `${base}/documents`, {
      params: LeaderboardParams,
      success: Schema.Struct({ documents: Schema.Array(DocumentView) }),
      error: errors
    }).annotate(OpenApi.Summary, "The active shared documents (metadata only)"),
    HttpApiEndpoint.post("uploadDocument", `${base}/documents`, {
      params: LeaderboardParams,
      payload: DocumentUploadRequest,
      success: [DocumentView.pipe(HttpApiSchema.status(201)), DocumentView],
      error: [...errors, InvalidDocument, PayloadTooLarge, IdReused]
    }).annotate(OpenApi.Summary, "Upload a document (201; an identical retry 200; the id reused 409)").annotate(
      OpenApi.Description,
      "Formats: txt, md, csv, json and pdf, told by the bytes (400 `invalid_document` otherwise). Limits (413 " +
        `\`payload_too_large\`): ${limits.documentBytes} bytes per file, ${limits.documentText} characters of extracted ` +
        `text per file, ${limits.caseDocumentText} characters for all the documents of a case together (its own and the ` +
        "shared ones). Shared documents are snapshotted into every new draft."
    ),
    HttpApiEndpoint.delete("archiveDocument", `${base}/documents/:document_id`, {
      params: DocumentParams,
      success: DocumentView,
      error: errors
    }).annotate(OpenApi.Summary, "Archive a shared document for future cases (its id cannot be reused)"),
    HttpApiEndpoint.post("createCase", `${base}/cases`, {
      params: LeaderboardParams,
      payload: CaseCreateRequest,
      success: [CaseView.pipe(HttpApiSchema.status(201)), CaseView],
      error: [...errors, PayloadTooLarge, IdReused]
    }).annotate(OpenApi.Summary, "Create a draft case (201; an identical retry 200; the id with another payload 409)"),
    HttpApiEndpoint.get("getCase", `${base}/cases/:case_id`, {
      params: CaseParams,
      success: CaseView,
      error: errors
    }).annotate(OpenApi.Summary, "A case with its responses, review and review history"),
    HttpApiEndpoint.put("saveConfig", `${base}/cases/:case_id/config`, {
      params: CaseParams,
      payload: ConfigRequest,
      success: CaseView,
      error: [...errors, StaleRevision, ImmutableCase, GenerationInProgress]
    }).annotate(OpenApi.Summary, "Change a draft's prompt override"),
    HttpApiEndpoint.post("generate", `${base}/cases/:case_id/generate`, {
      params: CaseParams,
      payload: Schema.Struct({}),
      success: CaseView,
      error: [...errors, ConfigurationChanged, GenerationInProgress, ImmutableCase]
    }).annotate(OpenApi.Summary, "Generate one response per candidate; answers when generation is complete"),
    HttpApiEndpoint.put("saveReview", `${base}/cases/:case_id/review`, {
      params: CaseParams,
      payload: ReviewRequest,
      success: CaseView,
      error: [...errors, StaleRevision, CaseNotGenerated, GenerationInProgress, ImmutableCase, InvalidVerdicts]
    }).annotate(OpenApi.Summary, "Save a draft review, or confirm it")
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Human Evaluation",
    description: "Blind review of the candidates' answers by signed-in members of the leaderboard's workspace " +
      "(API tokens are refused). The leaderboard needs eval_type `human` and 2 to 8 candidates (409 " +
      "`wrong_eval_type`, `invalid_candidate_count`). Responses show only a label until the case's review is " +
      "confirmed. Each generated response is also a trace with source `manual`."
  }))
{}
