import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Readiness } from "@podium/domain/shared"
import { Api } from "../api/Api.ts"
import { Health, Unhealthy } from "./HealthApi.ts"

export const serviceName = "podium"
export const serviceVersion = "0.1.0"

export const HealthHttp = HttpApiBuilder.group(
  Api,
  "health",
  Effect.fn(function*(handlers) {
    const readiness = yield* Readiness
    return handlers.handle("check", () =>
      Effect.gen(function*() {
        if (yield* readiness.database) {
          return Health.make({ ok: true, service: serviceName, version: serviceVersion, database: "up" })
        }
        return yield* Effect.fail(new Unhealthy({
          ok: false,
          service: serviceName,
          version: serviceVersion,
          database: "down",
          error: { code: "database_unavailable", message: "The database does not answer" }
        }))
      }))
  })
)
