import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Links } from "@podium/domain/shared"
import { exportedTrace, TraceExport } from "@podium/domain/inference"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const contentTypes = { jsonl: "application/jsonl", ndjson: "application/x-ndjson" } as const

export const TracesHttp = HttpApiBuilder.group(
  Api,
  "traces",
  Effect.fn(function*(handlers) {
    const exporter = yield* TraceExport
    const links = yield* Links
    return handlers.handle("export", ({ params, query }) =>
      Effect.gen(function*() {
        const limit = query.limit ?? 100
        const offset = query.offset ?? 0
        const principal = yield* CurrentPrincipal
        const exportQuery = {
          limit,
          offset,
          batchLimit: query.batch_limit ?? 25,
          cursor: query.cursor,
          source: query.source,
          runId: query.run_id
        }
        const format = query.format ?? "jsonl"
        if (format !== "json") {
          const { chunks, nextCursor } = yield* exporter.lines(principal, params.leaderboard_id, exportQuery)
          return HttpServerResponse.stream(chunks, {
            contentType: contentTypes[format],
            headers: nextCursor === null ? {} : { "x-next-cursor": nextCursor }
          })
        }
        const { batches, nextCursor } = yield* exporter.page(principal, params.leaderboard_id, exportQuery)
        const read = yield* Stream.runCollect(batches)
        const rows = read.flat().map(exportedTrace)
        return {
          leaderboard_id: params.leaderboard_id,
          traces_url: links.tracesUrl(params.leaderboard_id),
          count: rows.length,
          limit,
          offset,
          batch_count: read.length,
          scanned_rows: rows.length,
          next_offset: nextCursor === null ? null : offset + rows.length,
          next_cursor: nextCursor,
          rows
        }
      }).pipe(mapDomainErrors))
  })
)
