import { Api } from "@podium/adapters-http/api/Api"
import * as AccessErrors from "@podium/adapters-http/access/AccessErrors"
import * as SharedErrors from "@podium/adapters-http/api/Errors"
import * as DatasetsErrors from "@podium/adapters-http/datasets/DatasetsErrors"
import * as HumanErrors from "@podium/adapters-http/human/HumanErrors"
import * as InferenceErrors from "@podium/adapters-http/inference/InferenceErrors"
import * as IntegrationsErrors from "@podium/adapters-http/integrations/IntegrationsErrors"
import * as LeaderboardsErrors from "@podium/adapters-http/leaderboards/LeaderboardsErrors"
import * as ModelsErrors from "@podium/adapters-http/models/ModelsErrors"
import * as RunsErrors from "@podium/adapters-http/runs/RunsErrors"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Ajv2020 } from "ajv/dist/2020.js"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, startPodium } from "./support/Podium.ts"

/**
 * The served `/openapi.json` against the official OpenAPI 3.1 JSON schema, and against what the
 * contract promises: every route listed, the right credential on each, errors documented.
 */

interface Parameter {
  readonly name: string
  readonly in: "query" | "header" | "path" | "cookie"
}
type SecurityRequirement = Record<string, ReadonlyArray<string>>
interface Schema {
  readonly $ref?: string
  readonly type?: string
  readonly properties?: Record<string, Schema>
  readonly required?: ReadonlyArray<string>
  readonly enum?: ReadonlyArray<unknown>
  readonly anyOf?: ReadonlyArray<Schema>
  readonly oneOf?: ReadonlyArray<Schema>
}
interface Response {
  readonly description: string
  readonly content?: Record<string, { readonly schema?: Schema }>
}
interface Operation {
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: unknown
  readonly security?: ReadonlyArray<SecurityRequirement>
  readonly responses: Record<string, Response>
}
interface SecurityScheme {
  readonly type: string
  readonly scheme?: string
  readonly bearerFormat?: string
}
interface Document {
  readonly [key: string]: unknown
  readonly openapi: string
  readonly security?: ReadonlyArray<SecurityRequirement>
  readonly paths: Record<string, Record<string, unknown>>
  readonly components: {
    readonly schemas: Record<string, Schema>
    readonly securitySchemes: Record<string, SecurityScheme>
  }
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

let podium: Podium
let document: Document
let operations: Array<{ readonly route: string; readonly operation: Operation }>

beforeAll(async () => {
  podium = await startPodium()
  const reply = await podium.request("GET", "/openapi.json")
  expect(reply.status).toBe(200)
  document = reply.body
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => methods.includes(method))
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation: operation as Operation }))
  )
})
afterAll(() => podium.stop())

const operation = (method: string, path: string): Operation => {
  const found = document.paths[path]?.[method.toLowerCase()]
  if (found === undefined) throw new Error(`${method} ${path} is not in the document`)
  return found as Operation
}

/** Follows local `$ref`s (`#/components/schemas/X`) to the schema they name. */
const resolveSchema = (schema: Schema): Schema => {
  if (schema.$ref === undefined) return schema
  const prefix = "#/components/schemas/"
  if (!schema.$ref.startsWith(prefix)) throw new Error(`unexpected $ref ${schema.$ref}`)
  const target = document.components.schemas[schema.$ref.slice(prefix.length)]
  if (target === undefined) throw new Error(`dangling $ref ${schema.$ref}`)
  return resolveSchema(target)
}

/** The error classes of the contract, the shared ones and each context's: each has its `code` and `status` as statics. */
const errorModules = [
  SharedErrors,
  AccessErrors,
  LeaderboardsErrors,
  InferenceErrors,
  HumanErrors,
  IntegrationsErrors,
  DatasetsErrors,
  RunsErrors,
  ModelsErrors
]
const classes = errorModules.flatMap((module): Array<unknown> => Object.values(module)).filter((value): value is typeof value & {
  readonly identifier: string
  readonly code: string
  readonly status: number
} => typeof value === "function" && "code" in value && "status" in value && "identifier" in value)

describe("GET /openapi.json", () => {
  it("gives the service's version, and says which interface draft it implements", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    const info = (document as unknown as { info: { version: string; description: string } }).info
    expect(info.version).toBe(pkg.version)
    expect(info.description).toContain("interface draft 1.0.0")
  })

  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator({ allErrors: true })
    const result = await validator.validate(structuredClone(document))
    expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
    expect(document.openapi).toMatch(/^3\.1\.\d+$/)
  })

  // The official 3.1 schema leaves Schema Objects unchecked ("without Schema Object validation"),
  // so check each against the JSON Schema 2020-12 meta-schema, patterns included.
  it("has schemas that are valid JSON Schema 2020-12", () => {
    const ajv = new Ajv2020({
      strict: true,
      allErrors: true,
      formats: {
        regex: (pattern: string) => {
          try {
            new RegExp(pattern, "u")
            return true
          } catch {
            return false
          }
        },
        uri: true,
        "uri-reference": true
      }
    })
    const schemas: Array<{ readonly at: string; readonly schema: unknown }> = []
    const collect = (value: unknown, at: string): void => {
      if (typeof value !== "object" || value === null) return
      for (const [key, child] of Object.entries(value)) {
        if (key === "schema") schemas.push({ at: `${at}/schema`, schema: child })
        else collect(child, `${at}/${key}`)
      }
    }
    collect(document.paths, "#/paths")
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      schemas.push({ at: `#/components/schemas/${name}`, schema })
    }
    expect(schemas.length).toBeGreaterThan(Object.keys(document.components.schemas).length)
    const invalid = schemas.flatMap(({ at, schema }) =>
      ajv.validateSchema(schema as object) === true ? [] : [`${at}: ${ajv.errorsText(ajv.errors)}`]
    )
    expect(invalid).toEqual([])
  })

  it("lists every endpoint of the Api, and nothing else", () => {
    const fromApi = Object.values(Api.groups).flatMap((group) =>
      Object.values(group.endpoints).map((endpoint) =>
        `${endpoint.method.toUpperCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`
      )
    )
    expect(fromApi.length).toBeGreaterThan(0)
    expect(operations.map((o) => o.route).sort()).toEqual([...fromApi].sort())
  })

  // /docs groups operations by tag: one per HttpApi group, named in Title Case (small joining words
  // lower case, acronyms as written), none twice, each described; every operation's tag is one of them.
  // "Models" alone is not a tag: the docs page lists the schemas under that heading already.
  it("names each group's tag once, in Title Case, with a description, and tags every operation with one of them", () => {
    const tags = (document as unknown as { tags: ReadonlyArray<{ name: string; description?: string }> }).tags
    const names = tags.map((t) => t.name)
    expect(names).toHaveLength(Object.keys(Api.groups).length)
    expect(new Set(names).size, `tags named twice: ${names.filter((n, i) => names.indexOf(n) !== i).join(", ")}`).toBe(names.length)
    expect(names).not.toContain("Models")
    const small = new Set(["a", "an", "and", "for", "of", "on", "or", "the", "to", "with"])
    const titleCase = (name: string) =>
      name.split(" ").every((word, i) =>
        (i > 0 && small.has(word)) || word.split("-").every((part) => /^[A-Z0-9][A-Za-z0-9]*$/.test(part))
      )
    expect(names.filter((n) => !titleCase(n)), "tags not in Title Case").toEqual([])
    expect(tags.filter((t) => (t.description ?? "").trim().length < 20).map((t) => t.name), "tags without a description").toEqual([])
    const untagged = operations.filter(({ operation }) => {
      const own = (operation as { tags?: ReadonlyArray<string> }).tags ?? []
      return own.length !== 1 || !names.includes(own[0]!)
    })
    expect(untagged.map((o) => o.route)).toEqual([])
  })

  it("lists the routes the service is known to have", () => {
    const routes = operations.map((o) => o.route)
    expect(routes).toEqual(expect.arrayContaining([
      "GET /healthz",
      "GET /api/tokens",
      "POST /api/tokens",
      "POST /api/tokens/{token_id}/revoke",
      "DELETE /api/tokens/{token_id}",
      "POST /api/integrations/validate",
      "GET /api/invite-user",
      "POST /api/invite-user",
      "DELETE /api/invite-user",
      "POST /api/datasets/hub/check",
      "GET /api/models",
      "POST /api/models",
      "GET /api/models/{model_id}",
      "PATCH /api/models/{model_id}",
      "DELETE /api/models/{model_id}",
      "GET /api/models/{model_id}/leaderboards",
      "GET /api/base-models",
      "GET /api/models/{model_id}/fine-tune/runs",
      "POST /api/models/{model_id}/fine-tune/run",
      "POST /api/models/{model_id}/fine-tune/sync",
      "GET /api/models/{model_id}/versions"
    ]))
  })
})

describe("models in the document", () => {
  const bodyOf = (method: string, path: string): Schema => {
    const body = (operation(method, path).requestBody as { content: Record<string, { schema: Schema }> }).content["application/json"]!.schema
    const members = (body.anyOf ?? [body]).map(resolveSchema).filter((member) => member.type === "object")
    expect(members, `${method} ${path}`).toHaveLength(1)
    return members[0]!
  }
  const successOf = (method: string, path: string, status: string) =>
    resolveSchema(operation(method, path).responses[status]!.content!["application/json"]!.schema!)

  it("accepts every field of the create and update requests in snake_case and in its camelCase alias", () => {
    const pairs = {
      model_name: "modelName",
      leaderboard_ids: "leaderboardIds",
      creation_mode: "creationMode",
      selected_base_model_version_id: "selectedBaseModelVersionId",
      selected_base_model_resolution_id: "selectedBaseModelResolutionId",
      auto_update_model: "autoUpdateModel",
      continuous_self_learning: "continuousSelfLearning",
      hypertuning_parameters: "hypertuningParameters",
      fine_tune_schedule: "fineTuneSchedule"
    }
    for (const [method, path] of [["POST", "/api/models"], ["PATCH", "/api/models/{model_id}"]] as const) {
      const body = bodyOf(method, path)
      const properties = Object.keys(body.properties ?? {})
      expect(properties, `${method} ${path}`).toEqual(expect.arrayContaining(["name", "description", ...Object.entries(pairs).flat()]))
      for (const [field, alias] of Object.entries(pairs)) {
        expect(body.properties![alias], `${method} ${path} ${alias}`).toMatchObject({ description: expect.stringContaining(field) })
      }
    }
    expect(bodyOf("POST", "/api/models").required).toEqual(["name"])
    expect(bodyOf("PATCH", "/api/models/{model_id}").required ?? []).toEqual([])
  })

  it("answers the create with 201 and a fine-tune start with 202, its body optional", () => {
    expect(Object.keys(operation("POST", "/api/models").responses)).toContain("201")
    expect(Object.keys(operation("POST", "/api/models/{model_id}/fine-tune/run").responses)).toContain("202")
    const start = (operation("POST", "/api/models/{model_id}/fine-tune/run").requestBody as { content: Record<string, { schema: Schema }> })
      .content["application/json"]!.schema
    expect(start.anyOf?.map((member) => member.type)).toContain("null")
  })

  it("shows models, runs and versions without their workspace or what training made", () => {
    const model = resolveSchema(successOf("GET", "/api/models/{model_id}", "200").properties!["model"]!)
    expect(Object.keys(model.properties!)).toContain("business_id")
    expect(Object.keys(model.properties!)).not.toContain("workspace_id")
    const run = resolveSchema(successOf("POST", "/api/models/{model_id}/fine-tune/run", "202").properties!["run"]!)
    expect(Object.keys(run.properties!)).toEqual(expect.arrayContaining(["id", "model_id", "status", "trigger", "trainer", "metrics"]))
    expect(Object.keys(run.properties!)).not.toContain("artifact")
    expect(Object.keys(run.properties!)).not.toContain("workspace_id")
    const versions = successOf("GET", "/api/models/{model_id}/versions", "200").properties!["versions"] as Schema & { items: Schema }
    const version = resolveSchema(versions.items)
    expect(Object.keys(version.properties!)).toEqual(expect.arrayContaining(["version_id", "deployment_status", "inference_url"]))
    expect(Object.keys(version.properties!)).not.toContain("artifact")
  })

  it("documents the model assignment codes of the spec as 409s", () => {
    const conflicts = (method: string, path: string) =>
      ((operation(method, path).responses["409"]?.content?.["application/json"]?.schema?.anyOf) ?? [])
        .map((member) => member.$ref?.split("/").at(-1))
    for (const [method, path] of [["POST", "/api/models"], ["PATCH", "/api/models/{model_id}"]] as const) {
      expect(conflicts(method, path), `${method} ${path}`).toEqual(expect.arrayContaining([
        "LeaderboardDatasetMinRowsRequired",
        "LeaderboardRunningAssignmentBlocked",
        "NoSuccessfulFineTune"
      ]))
    }
    expect(ModelsErrors.LeaderboardDatasetMinRowsRequired.code).toBe("leaderboard_dataset_min_rows_required")
    expect(ModelsErrors.LeaderboardRunningAssignmentBlocked.code).toBe("leaderboard_running_assignment_blocked")
    expect(ModelsErrors.NoSuccessfulFineTune.code).toBe("no_successful_fine_tune")
  })
})

describe("security in the document", () => {
  const effectiveSecurity = (op: Operation) => op.security ?? document.security ?? []

  it("names a declared scheme on every operation but the health check", () => {
    const schemes = Object.keys(document.components.securitySchemes)
    for (const { route, operation: op } of operations) {
      if (route === "GET /healthz") continue
      const security = effectiveSecurity(op)
      expect(security.length, `${route} has no security requirement`).toBeGreaterThan(0)
      for (const requirement of security) {
        expect(Object.keys(requirement).length, `${route} lists an empty requirement`).toBeGreaterThan(0)
        for (const name of Object.keys(requirement)) {
          expect(schemes, `${route} names undeclared scheme ${name}`).toContain(name)
        }
      }
    }
  })

  it("asks no credential for the health check", () => {
    expect(effectiveSecurity(operation("GET", "/healthz"))).toEqual([])
  })

  it("declares Session as a bearer JWT and ApiToken as a bearer token", () => {
    const { Session, ApiToken } = document.components.securitySchemes
    expect(Session?.type).toBe("http")
    expect(Session?.scheme?.toLowerCase()).toBe("bearer")
    expect(Session?.bearerFormat).toBe("JWT")
    expect(ApiToken?.type).toBe("http")
    expect(ApiToken?.scheme?.toLowerCase()).toBe("bearer")
  })

  it("uses Session for the administration routes", () => {
    const sessionRoutes = operations.filter(({ route }) =>
      /^\w+ \/api\/(tokens(\/|$)|integrations\/validate$|invite-user$)/.test(route)
    )
    expect(sessionRoutes.length).toBeGreaterThanOrEqual(8)
    for (const { route, operation: op } of sessionRoutes) {
      expect(effectiveSecurity(op), route).toEqual([{ Session: [] }])
    }
  })

  it("uses ApiToken for the hub dataset check", () => {
    expect(effectiveSecurity(operation("POST", "/api/datasets/hub/check"))).toEqual([{ ApiToken: ["leaderboards:write"] }])
  })
})

describe("errors in the document", () => {
  it("documents a 400 wherever the request has a body or parameters", () => {
    for (const { route, operation: op } of operations) {
      const takesInput = op.requestBody !== undefined ||
        (op.parameters ?? []).some((p) => p.in === "query" || p.in === "path")
      if (takesInput) expect(Object.keys(op.responses), `${route} does not document 400`).toContain("400")
    }
  })

  /** Every error body of the document: the component it names, its status and its code. */
  const errorResponses = () =>
    operations.flatMap(({ route, operation: op }) =>
      Object.entries(op.responses).filter(([status]) => Number(status) >= 400).flatMap(([status, response]) => {
        const schema = response.content?.["application/json"]?.schema
        expect(schema, `${route} ${status} has no JSON body`).toBeDefined()
        return (schema!.anyOf ?? schema!.oneOf ?? [schema!]).map((member) => {
          const where = `${route} ${status}`
          expect(member.$ref, `${where} names no component`).toMatch(/^#\/components\/schemas\/\w+$/)
          const error = resolveSchema(member).properties?.["error"]
          expect(resolveSchema(member).required, where).toContain("error")
          return { where, status: Number(status), component: member.$ref!.split("/").at(-1)!, error: resolveSchema(error!) }
        })
      })
    )

  it("gives every error response a named schema whose body is {error: {code, message, details?}} with one code", () => {
    const responses = errorResponses()
    expect(responses.length).toBeGreaterThanOrEqual(operations.length)
    for (const { error, where } of responses) {
      expect(error.type, where).toBe("object")
      expect(error.required, where).toEqual(expect.arrayContaining(["code", "message"]))
      expect(error.properties?.["message"]?.type, where).toBe("string")
      expect(error.properties?.["code"]?.type, where).toBe("string")
      expect(error.properties?.["code"]?.enum, where).toHaveLength(1)
      expect(Object.keys(error.properties ?? {}).filter((key) => !["code", "message", "details"].includes(key)), where)
        .toEqual([])
    }
  })

  it("has one status and one component per code, the class's own", () => {
    const byCode = new Map<unknown, { readonly status: number; readonly component: string }>()
    for (const { component, error, status, where } of errorResponses()) {
      const code = error.properties!["code"]!.enum![0]
      const seen = byCode.get(code)
      if (seen === undefined) byCode.set(code, { status, component })
      else expect({ status, component }, `${where}: ${code}`).toEqual(seen)
      const Class = classes.find((c) => c.identifier === component)
      if (Class === undefined) expect(where, `${component} is no error class`).toBe("GET /healthz 503")
      else expect({ code: Class.code, status: Class.status }, where).toEqual({ code, status })
    }
    expect(byCode.get("stale_revision")).toEqual({ status: 409, component: "StaleRevision" })
    expect(byCode.get("immutable_case")).toEqual({ status: 409, component: "ImmutableCase" })
  })

  it("names each error class by a code no other class has", () => {
    expect(classes.length).toBeGreaterThan(20)
    const codes = classes.map((c) => c.code)
    expect(new Set(codes).size).toBe(codes.length)
    expect(new Set(classes.map((c) => c.identifier)).size).toBe(classes.length)
    for (const Class of classes) expect(Class.code, Class.identifier).toMatch(/^[a-z]+(_[a-z]+)*$/)
  })
})
