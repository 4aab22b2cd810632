import type { Podium } from "./Podium.ts"

/** One operation of the served OpenAPI document, as the generated route tests walk them. */
export interface Operation {
  readonly method: string
  /** The OpenAPI path, with `{name}` placeholders. */
  readonly path: string
  readonly parameters: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema?: any }>
  /** The JSON request body's schema, when the operation takes one. */
  readonly body: any | undefined
  /** The security scheme names accepted (`ApiToken`, `Session`, `PushToken`); empty when public. */
  readonly schemes: ReadonlyArray<string>
  /** The one scope an API token needs (`x-required-scope`); undefined on a route that takes any of several. */
  readonly requiredScope: string | undefined
  /** The scopes any one of which gets an API token in: `x-accepted-scopes`, else the required scope alone. */
  readonly acceptedScopes: ReadonlyArray<string>
}

/** Every operation of the running service's `/openapi.json`. */
export const operations = async (podium: Podium): Promise<ReadonlyArray<Operation>> => {
  const spec = (await podium.request("GET", "/openapi.json")).body
  const found: Array<Operation> = []
  for (const [path, item] of Object.entries<any>(spec.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
      found.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.["application/json"]?.schema,
        schemes: [...new Set((op.security ?? []).flatMap((requirement: object) => Object.keys(requirement)))] as Array<string>,
        requiredScope: op["x-required-scope"],
        acceptedScopes: op["x-accepted-scopes"] ?? (op["x-required-scope"] === undefined ? [] : [op["x-required-scope"]])
      })
    }
  }
  return found
}

/** The path with every `{name}` replaced by `values[name]`, else by `fallback`. */
export const fill = (path: string, values: Record<string, string> = {}, fallback = crypto.randomUUID()) =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? fallback))
