/**
 * One endpoint core, two transports. An endpoint the front door also answers has one core: the
 * caller and the request its own schemas decoded in, its answer (body and headers) out. The router's
 * handler runs it (`handlerOf`) and so does the front door (FrontDoor.ts), so the answer, headers
 * included, is built in one place whichever transport carries it.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { Principal } from "@podium/domain/access"
import { CurrentPrincipal } from "./api/Security.ts"

/** A core's answer: 200 with this content type, body and headers. */
export interface Served {
  readonly contentType: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/** An endpoint's core: the caller and the decoded request in, the answer out (or the contract's errors). */
export type Core<Request, E> = (principal: Principal, request: Request) => Effect.Effect<Served, E>

/** `served` as the router's response. */
export const responseOf = ({ body, contentType, headers }: Served): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { contentType, headers })

/** The router's handler for `core`: run as the caller the route's authentication middleware established. */
export const handlerOf = <Request, E>(core: Core<Request, E>) => (request: Request) =>
  Effect.flatMap(Effect.service(CurrentPrincipal), (principal) => Effect.map(core(principal, request), responseOf))
