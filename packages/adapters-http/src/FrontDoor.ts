/**
 * Front routes: endpoints answered straight from Node's `request` event, before the HttpApi router
 * (why: see packages/server/src/HoldingServer.ts). A front route is built from the endpoint's own
 * definition, never written by hand: the router's path matcher over the Api's own paths, the
 * endpoint's params, query and payload schemas with the Api's parse options, its authentication
 * middleware and scope annotation, its declared errors. It shares with the router the credential
 * check (handlers/Authentication.ts), the body check (RequestPipeline.ts), the error answer
 * (ErrorAnswer.ts), the request log line (RequestLog.ts) and the endpoint's core (EndpointCore.ts),
 * so the two transports cannot answer a request differently (test/front-door-differential.test.ts).
 * What a front route does not take as it comes (see `makeFrontDoor`) it declines, untouched, to the
 * router.
 */
import { Context, Effect, Exit, type Fiber, LogLevel, Option, References, Schema, SchemaAST, SchemaIssue, type Scope, Stream } from "effect"
import { FindMyWay, type Headers, HttpRouter, HttpTraceContext } from "effect/http"
import { HttpApi, type HttpApiEndpoint, HttpApiError } from "effect/http-api"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Principal } from "@podium/domain/access"
import type { Core, Served } from "./EndpointCore.ts"
import { answerOfCause, declaredErrors, type ErrorAnswer } from "./ErrorAnswer.ts"
import { makeAuthenticator, presentedOf, requirementOf } from "./handlers/Authentication.ts"
import { isRowByRow, jsonBodyText, maxBodyBytes, nosniff, requestIdOf } from "./RequestPipeline.ts"
import { logRequest } from "./RequestLog.ts"
import { makeRouteMetrics } from "./RequestMetrics.ts"

/**
 * A route answered straight from Node's `request` event, before the HttpApi router: `handle`
 * answers the request and says true, or says false and leaves it to the router untouched.
 */
export interface FrontRoute {
  readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean
}

type Decoded<S> = [S] extends [never] ? undefined : S extends Schema.Top ? S["Type"] : undefined

/** What a core gets at the front door: the request parts the endpoint's own schemas decoded, as its handler gets them. */
export interface RequestOf<E extends HttpApiEndpoint.Top> {
  readonly params: Decoded<E["~Params"]>
  readonly query: Decoded<E["~Query"]>
  readonly payload: Decoded<E["~Payload"]>
}

/** The parse options of each request part, as the HttpApi reads them from the annotations. */
interface ParseOptions {
  readonly params: SchemaAST.ParseOptions | undefined
  readonly query: SchemaAST.ParseOptions | undefined
  readonly payload: SchemaAST.ParseOptions | undefined
}

/** The request as it came: the path's segments and the query as the router parsed them, the body's text. */
interface Raw {
  readonly params: Readonly<Record<string, string | undefined>>
  readonly query: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly text: string | undefined
}

/** An endpoint with the core that answers it, ready to be built into the front door. */
export interface FrontEndpoint {
  readonly endpoint: HttpApiEndpoint.Top
  readonly build: (options: ParseOptions) => (principal: Principal, raw: Raw) => Effect.Effect<Served, unknown, Scope.Scope>
}

const invalidJson = new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" }))

/** A request part decoded by its schema as the router decodes it; an endpoint without the part gets undefined. */
const decoder = <A>(kind: "Params" | "Query" | "Payload", schema: Schema.Top | undefined, options: SchemaAST.ParseOptions | undefined) => {
  if (schema === undefined) return (): Exit.Exit<A, HttpApiError.HttpApiSchemaError> => Exit.succeed(undefined as A)
  const decode = Schema.decodeUnknownExit(schema as Schema.Codec<A, unknown>, options)
  return (input: unknown) => Exit.mapError(decode(input), (cause) => new HttpApiError.HttpApiSchemaError({ kind, cause }))
}

/** The endpoint's JSON payload, read as the router reads it: "" as null or undefined, then JSON, then the schema. */
const payloadDecoder = <A>(endpoint: HttpApiEndpoint.Top, options: SchemaAST.ParseOptions | undefined) => {
  const json = endpoint.payload.get("application/json")
  if (json === undefined) return (): Exit.Exit<A, HttpApiError.HttpApiSchemaError> => Exit.succeed(undefined as A)
  const decode = decoder<A>("Payload", Schema.Union(json.schemas), options)
  const empty = json.schemas.some((schema) => SchemaAST.isNull(SchemaAST.toEncoded(schema.ast))) ? null : undefined
  return (text: string | undefined) => {
    if (text === undefined || text === "") return decode(empty)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return Exit.fail(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause: invalidJson }))
    }
    return decode(parsed)
  }
}

/**
 * `endpoint` answered at the front door by `core`, the core its router handler runs too
 * (`handlerOf`). The request parts are decoded by the endpoint's own schemas, in the router's order
 * (params, query, payload) and after the credential check, as the router does.
 */
export const frontRoute = <E extends HttpApiEndpoint.Top, Err>(endpoint: E, core: Core<RequestOf<E>, Err>): FrontEndpoint => ({
  endpoint,
  build: (options) => {
    const params = decoder<RequestOf<E>["params"]>("Params", endpoint.params, options.params)
    const query = decoder<RequestOf<E>["query"]>(
      "Query",
      endpoint.query === undefined ? undefined : Schema.toCodecArrayFromSingle(endpoint.query),
      options.query
    )
    const payload = payloadDecoder<RequestOf<E>["payload"]>(endpoint, options.payload)
    return (principal, raw) => {
      const p = params(raw.params)
      if (Exit.isFailure(p)) return Effect.failCause(p.cause)
      const q = query(raw.query)
      if (Exit.isFailure(q)) return Effect.failCause(q.cause)
      const b = payload(raw.text)
      if (Exit.isFailure(b)) return Effect.failCause(b.cause)
      return core(principal, { params: p.value, query: q.value, payload: b.value })
    }
  }
})

/** The part of an HttpApi the front door reads: its groups, endpoints and annotations. */
export interface ApiSource {
  readonly annotations: Context.Context<never>
  readonly groups: Readonly<Record<string, {
    readonly annotations: Context.Context<never>
    readonly endpoints: Readonly<Record<string, HttpApiEndpoint.Top>>
  }>>
}

/** The parse options the HttpApi decodes an endpoint's request with (API, group, then endpoint annotations). */
const parseOptionsOf = (annotations: Context.Context<never>): ParseOptions => {
  const fallback = Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  return {
    params: Context.getOrUndefined(annotations, HttpApi.ParamsParseOptions) ?? fallback,
    query: Context.getOrUndefined(annotations, HttpApi.QueryParseOptions) ?? fallback,
    payload: Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ?? fallback
  }
}

/**
 * URLs in their plain form: printable ASCII without percent-encoding. The router's pipeline judges
 * an encoded URL before any route (RequestInput's `urlIssue`); those go to it.
 */
const plainUrl = /^[\x21-\x24\x26-\x7e]*$/

/** A media type as the HttpApi compares it (lower case, parameters and spaces aside). */
const mediaType = (contentType: string) => {
  const normalized = contentType.toLowerCase().trim()
  const at = normalized.indexOf(";")
  return at === -1 ? normalized : normalized.slice(0, at).trim()
}

/** The methods whose JSON bodies the router's pipeline reads and checks before routing. */
const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

type Run = (effect: Effect.Effect<void>) => Fiber.Fiber<void>

/** Overlays a request's context keeps before it is flattened (see `makeFrontDoor`). */
const requestDepth = 32

/**
 * The front door for `routes`, endpoints of `api` each with its core. A request is found as the
 * router finds it: the router's own matcher (FindMyWay, with the router's configuration) holds
 * every endpoint of the Api, so a path reaches a front route exactly when the router would hand it
 * to that endpoint (case, trailing slash, parameter length and precedence alike). A found route
 * takes the request only in the form it answers without the router's machinery, and declines it
 * (the router then answers, as it answers every route) otherwise: a URL that is not plain, a body
 * that is not JSON or whose length is not declared up front (or over the limit), a body where the
 * endpoint takes none, another method (HEAD included).
 *
 * A request it takes goes the router's way: a request id (the caller's when sane); the body's
 * check; the credential check with the endpoint's scope; params, query and payload by the
 * endpoint's schemas; the core; the error answer for any failure, declared errors as the endpoint
 * declares them; the request log line.
 */
export const makeFrontDoor = (api: ApiSource, routes: ReadonlyArray<FrontEndpoint>) =>
  Effect.gen(function*() {
    const { authenticate } = yield* makeAuthenticator
    // the request line is logged at Info: no fiber for it when the level is above
    const logsRequests = yield* LogLevel.isEnabled("Info")
    // no tracer given: no span (Effect's no-op span still costs an object, a context overlay and an exit observer)
    const tracing = yield* References.TracerEnabled
    // request counts and latency, by the endpoint's path template as the router's middleware counts them
    const metricsOf = yield* makeRouteMetrics
    // A request nests more services than Context's default 8 overlays (spans, scope, log
    // annotations): past them each `add` copies the whole app context (over 100 services). The
    // request fibers' context keeps its overlays deeper instead.
    const run: Run = Effect.runForkWith(Context.makeUnsafe((yield* Effect.context<never>()).mapUnsafe, { maxDepth: requestDepth }))

    /** Writes the head and a text body (unless the client left or a head went out already). */
    const write = (
      response: ServerResponse,
      requestId: string,
      status: number,
      headers: Readonly<Record<string, string>>,
      contentType: string | undefined,
      body: string
    ) => {
      if (response.destroyed || response.headersSent) return
      response.writeHead(status, {
        ...headers,
        ...(contentType === undefined ? {} : { "content-type": contentType }),
        "content-length": Buffer.byteLength(body),
        ...nosniff,
        "x-request-id": requestId
      })
      response.end(body)
    }

    /**
     * Writes a streamed answer: the head at once (so the client has the headers before the first
     * chunk), then each chunk as it comes, waiting for the socket to drain when it is full (the
     * stream is pulled no faster than the client reads). Ends when the stream does; a client gone
     * stops it (the fiber is interrupted on close). A first chunk at hand as the head is written
     * (an upstream's first event comes with its headers) goes out with the head in one write; else
     * the head goes alone, before the event loop waits for anything.
     */
    const writeStream = (
      response: ServerResponse,
      requestId: string,
      headers: Readonly<Record<string, string>>,
      contentType: string,
      body: Stream.Stream<Uint8Array>
    ): Effect.Effect<void> => {
      if (response.destroyed || response.headersSent) return Effect.void
      response.writeHead(200, { ...headers, "content-type": contentType, ...nosniff, "x-request-id": requestId })
      let head: NodeJS.Immediate | undefined = setImmediate(() => {
        head = undefined
        response.flushHeaders()
      })
      const headWritten = () => {
        if (head === undefined) return
        clearImmediate(head)
        head = undefined
      }
      const drained = Effect.callback<void>((resume) => {
        const done = () => {
          response.off("drain", done)
          response.off("close", done)
          resume(Effect.void)
        }
        response.on("drain", done)
        response.on("close", done)
      })
      return Stream.runForEachArray(body, (chunks) => {
        headWritten()
        let room = true
        for (const chunk of chunks) room = response.write(chunk)
        return room || response.destroyed ? Effect.void : drained
      }).pipe(Effect.andThen(Effect.sync(() => response.end())), Effect.ensuring(Effect.sync(headWritten)))
    }

    /** Writes an error answer. */
    const writeError = (response: ServerResponse, requestId: string, answer: ErrorAnswer) =>
      answer.body === undefined
        ? write(response, requestId, answer.status, answer.headers, undefined, "")
        : write(response, requestId, answer.status, answer.headers, "application/json", JSON.stringify(answer.body))

    const logged = (request: IncomingMessage, requestId: string, started: number, status: number) =>
      logsRequests
        ? logRequest({ requestId, method: request.method ?? "", url: request.url ?? "", status, started })
        : Effect.void

    const build = (route: FrontEndpoint, annotations: Context.Context<never>) => {
      const { endpoint } = route
      const requirement = requirementOf(endpoint)
      if (requirement === undefined) throw new Error(`front route ${endpoint.path}: the front door serves authenticated endpoints only`)
      const takesBody = endpoint.payload.size > 0
      if (takesBody && (!bodyMethods.has(endpoint.method) || endpoint.payload.get("application/json")?.encoding._tag !== "Json")) {
        throw new Error(`front route ${endpoint.path}: the front door takes JSON bodies only`)
      }
      const serve = route.build(parseOptionsOf(annotations))
      const declared = declaredErrors(endpoint)
      const depthOnly = isRowByRow(endpoint.path)
      const spanName = `http.server ${endpoint.method}`
      const metrics = metricsOf(endpoint.method, endpoint.path)
      /** The request counted and its line logged once answered with `status`. */
      const finished = (request: IncomingMessage, requestId: string, started: number, status: number) => {
        metrics.record(status, started)
        return logged(request, requestId, started, status)
      }

      /** The endpoint's answer (or error answer) to a request whose body, if any, passed the check. */
      const answer = (request: IncomingMessage, raw: Raw, requestId: string): Effect.Effect<Served | ErrorAnswer, never, Scope.Scope> =>
        authenticate(presentedOf(request.headers, request.socket.remoteAddress), requirement).pipe(
          Effect.flatMap((principal) => serve(principal, raw)),
          Effect.catchCause((cause) => answerOfCause(cause, declared)),
          Effect.annotateLogs("request_id", requestId)
        )

      const respond = (
        request: IncomingMessage,
        response: ServerResponse,
        raw: Raw,
        requestId: string,
        started: number
      ) => {
        // the core's scope spans the writing: a streamed answer's resources go once it is written or cut off
        const answered = Effect.scoped(Effect.flatMap(answer(request, raw, requestId), (answer) => {
          if ("status" in answer) {
            writeError(response, requestId, answer)
            return finished(request, requestId, started, answer.status)
          }
          const { body, contentType, headers } = answer
          if (typeof body !== "string") {
            // counted once the stream ended (a client gone before counts 499, as the observer below says)
            const line = logged(request, requestId, started, 200)
            return Effect.andThen(writeStream(response, requestId, headers, contentType, body), Effect.andThen(Effect.sync(() => metrics.record(200, started)), line))
          }
          write(response, requestId, 200, headers, contentType, body)
          return finished(request, requestId, started, 200)
        }))
        const fiber = run(!tracing ? answered : Effect.withSpan(answered, spanName, {
          kind: "server",
          // the caller's trace continued (W3C `traceparent`, else B3), as the router's tracer middleware does
          parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers as Headers.Headers)),
          captureStackTrace: false,
          attributes: {
            "http.request.method": endpoint.method,
            "url.path": (request.url ?? "").split("?")[0],
            "podium.front_door": true
          }
        }))
        fiber.addObserver((exit) => {
          // the client went away: nobody reads an answer, and nothing failed
          if (Exit.isFailure(exit)) run(finished(request, requestId, started, 499))
        })
        response.on("close", () => {
          if (!response.writableEnded) fiber.interruptUnsafe()
        })
      }

      return (request: IncomingMessage, response: ServerResponse, found: FindMyWay.FindResult<unknown>): boolean => {
        const { headers } = request
        if (takesBody) {
          const contentType = headers["content-type"]
          if (contentType === undefined || !contentType.includes("json") || mediaType(contentType) !== "application/json") return false
          if (headers["transfer-encoding"] !== undefined) return false
        } else if (headers["transfer-encoding"] !== undefined || (headers["content-length"] ?? "0") !== "0") return false
        const length = takesBody ? Number(headers["content-length"]) : 0
        if (!Number.isSafeInteger(length) || length < 0 || length > maxBodyBytes) return false

        const started = performance.now()
        const incomingId = headers["x-request-id"]
        const requestId = requestIdOf(typeof incomingId === "string" ? incomingId : undefined)
        if (!takesBody) {
          respond(request, response, { params: found.params, query: found.searchParams, text: undefined }, requestId, started)
          return true
        }
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const text = jsonBodyText(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), depthOnly)
          if (typeof text !== "string") {
            writeError(response, requestId, text)
            metrics.record(text.status, started)
            if (logsRequests) run(logged(request, requestId, started, text.status))
            return
          }
          respond(request, response, { params: found.params, query: found.searchParams, text }, requestId, started)
        })
        return true
      }
    }

    type Handle = ReturnType<typeof build>
    const handles = new Map<HttpApiEndpoint.Top, Handle>()
    const endpoints = new Set(routes.map((route) => route.endpoint))
    const router = FindMyWay.make<Handle | undefined>(yield* HttpRouter.RouterConfig)
    const methods = new Set<string>()
    for (const group of Object.values(api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        const route = routes.find((route) => route.endpoint === endpoint)
        let handle: Handle | undefined
        if (route !== undefined) {
          handle = build(route, Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations))
          handles.set(endpoint, handle)
          methods.add(endpoint.method)
        }
        router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, handle)
      }
    }
    for (const endpoint of endpoints) {
      if (!handles.has(endpoint)) throw new Error(`front route ${endpoint.path}: not an endpoint of the Api (take it from Api.groups)`)
    }

    return {
      handle: (request, response) => {
        const method = request.method ?? ""
        const url = request.url ?? ""
        if (!methods.has(method) || !plainUrl.test(url)) return false
        const found = router.find(method, url)
        return found?.handler !== undefined && found.handler(request, response, found)
      }
    } satisfies FrontRoute
  })
