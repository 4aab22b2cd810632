import { readdirSync, readFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { parseSync } from "rolldown/utils"
import { describe, expect, it } from "vitest"

/**
 * Import boundaries (STYLE.md 1 and 2), checked on a real parse of every source file so that
 * comments, strings and multi-line imports cannot hide or fake an import:
 * - `packages/domain` imports only `effect` core modules and its own files (its tests may add a test runner);
 * - adapters import neither the server nor another adapter; nothing but the server imports the server;
 * - the domain is one folder per bounded context (`src/<context>/`): a file reaches another context
 *   only through that context's `index.ts`, and code outside the domain only through
 *   `@podium/domain/<context>`;
 * - contexts depend on each other one way (type imports included), and `shared/` on none;
 * - a context's memory adapters (`@podium/domain/<context>/memory`, inside the domain
 *   `../<context>/memory.ts`) are for tests: no code in a package's `src/` but tests imports them.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const packagesDir = join(root, "packages")

export interface ImportSite {
  /** `undefined` when the specifier is computed (`import(name)`) and so cannot be checked. */
  readonly specifier: string | undefined
  readonly line: number
}

export interface Violation {
  readonly file: string
  readonly line: number
  readonly specifier: string
  readonly reason: string
}

/** Says why `specifier`, imported by `file`, breaks the rule, or `undefined` when it is allowed. */
export type Rule = (specifier: string, file: string) => string | undefined

type Node = { readonly type: string; readonly start: number; readonly [key: string]: unknown }

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"

const stringValue = (node: unknown): string | undefined => {
  if (!isNode(node)) return undefined
  if (node.type === "Literal" && typeof node["value"] === "string") return node["value"]
  if (node.type === "TSLiteralType") return stringValue(node["literal"])
  if (node.type === "TemplateLiteral" && (node["expressions"] as Array<unknown>).length === 0) {
    const [quasi] = node["quasis"] as Array<{ value: { cooked: string | null } }>
    return quasi?.value.cooked ?? undefined
  }
  return undefined
}

/** The module each import names: static imports and re-exports (type-only too), `import(...)`, `typeof import(...)`, `require(...)`. */
export const importSites = (fileName: string, source: string): Array<ImportSite> => {
  const parsed = parseSync(fileName, source, { lang: fileName.endsWith(".tsx") ? "tsx" : "ts", sourceType: "module" })
  if (parsed.errors.length > 0) {
    throw new Error(`cannot parse ${fileName}: ${parsed.errors.map((e) => e.message).join("; ")}`)
  }
  const lineOf = (offset: number) => source.slice(0, offset).split("\n").length
  const sites: Array<ImportSite> = []
  const add = (node: Node, specifierNode: unknown) =>
    sites.push({ specifier: stringValue(specifierNode), line: lineOf(node.start) })
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item)
      return
    }
    if (typeof value !== "object" || value === null) return
    if (isNode(value)) {
      switch (value.type) {
        case "ImportDeclaration":
        case "ExportAllDeclaration":
        case "ImportExpression":
          add(value, value["source"])
          break
        case "ExportNamedDeclaration":
          if (value["source"] !== null && value["source"] !== undefined) add(value, value["source"])
          break
        case "TSImportType":
          add(value, value["source"] ?? value["argument"])
          break
        case "TSExternalModuleReference":
          add(value, value["expression"])
          break
        case "CallExpression": {
          const callee = value["callee"]
          if (isNode(callee) && callee.type === "Identifier" && callee["name"] === "require") {
            add(value, (value["arguments"] as Array<unknown>)[0])
          }
          break
        }
      }
    }
    for (const [key, child] of Object.entries(value)) {
      if (key !== "parent") visit(child)
    }
  }
  visit(parsed.program)
  return sites
}

export const check = (file: string, source: string, rule: Rule): Array<Violation> =>
  importSites(file, source).flatMap(({ line, specifier }): Array<Violation> => {
    const where = relative(root, file)
    if (specifier === undefined) {
      return [{ file: where, line, specifier: "<computed>", reason: "a computed import specifier cannot be checked" }]
    }
    const reason = rule(specifier, file)
    return reason === undefined ? [] : [{ file: where, line, specifier, reason }]
  })

const isRelative = (specifier: string) => specifier === "." || specifier === ".." || /^\.\.?\//.test(specifier)

const isInside = (dir: string, path: string) => path === dir || path.startsWith(dir + sep)

/** The package directory (`packages/<name>`) that holds `file`. */
const packageDirOf = (file: string): string => {
  const [name] = relative(packagesDir, file).split(sep)
  if (name === undefined || name === "..") throw new Error(`${file} is not inside ${packagesDir}`)
  return join(packagesDir, name)
}

/** Relative imports stay inside the importing file's package; crossing packages goes through its name. */
const stayInPackage = (specifier: string, file: string): string | undefined =>
  isInside(packageDirOf(file), resolve(dirname(file), specifier))
    ? undefined
    : `relative import leaves ${relative(root, packageDirOf(file))}`

/** `effect/<Module>` for the stable core modules; the lowercase subpaths are the unstable platform ones. */
const effectCore = /^effect(\/[A-Z][A-Za-z0-9]*|\/testing(\/[A-Z][A-Za-z0-9]*)?)?$/

/** Unit tests beside the code (STYLE.md 17, 18) need a runner and property testing; nothing else may. */
const testTools = new Set(["vitest", "@effect/vitest", "fast-check"])
const isTestFile = (file: string) => /\.test\.[cm]?tsx?$/.test(file)

export const domainRule: Rule = (specifier, file) => {
  if (isRelative(specifier)) return stayInPackage(specifier, file)
  if (effectCore.test(specifier)) return undefined
  if (testTools.has(specifier) && isTestFile(file)) return undefined
  if (specifier.startsWith("@podium/")) return "the domain depends on no other package of ours"
  if (specifier === "effect" || specifier.startsWith("effect/")) {
    return "only effect core modules (`effect`, `effect/<Module>`, `effect/testing`), not the platform ones"
  }
  return "the domain imports only `effect`"
}

const domainSrc = join(packagesDir, "domain", "src")

/** The context folder (`shared`, `access`, ...) that holds a domain path, if any. */
const contextOf = (path: string): string | undefined => {
  if (!isInside(domainSrc, path)) return undefined
  const parts = relative(domainSrc, path).split(sep)
  return parts.length > 1 ? parts[0] : undefined
}

/** Inside the domain, another context is reached through its `index.ts` only (its tests' memory adapters through `memory.ts`). */
export const contextRule: Rule = (specifier, file) => {
  if (!isRelative(specifier)) return undefined
  const target = resolve(dirname(file), specifier)
  const other = contextOf(target)
  if (other === undefined || other === contextOf(file)) return undefined
  return target === join(domainSrc, other, "index.ts") || target === join(domainSrc, other, "memory.ts")
    ? undefined
    : `reaches into the internals of context "${other}": import "../${other}/index.ts"`
}

export interface ContextEdge {
  readonly from: string
  readonly to: string
  readonly file: string
  readonly line: number
  readonly specifier: string
}

/**
 * The imports of a domain file into other contexts, type-only ones included. A test's import of
 * the test support (`testing/`, which itself builds on the contexts) is not an edge: only tests use it.
 */
export const contextEdges = (file: string, source: string): Array<ContextEdge> => {
  const from = contextOf(file)
  if (from === undefined) return []
  return importSites(file, source).flatMap(({ line, specifier }): Array<ContextEdge> => {
    if (specifier === undefined || !isRelative(specifier)) return []
    const to = contextOf(resolve(dirname(file), specifier))
    if (to === undefined || to === from || (to === "testing" && isTestFile(file))) return []
    return [{ from, to, file: relative(root, file), line, specifier }]
  })
}

/** The contexts on a shortest way from `start` to `goal` along the edges, both ends included. */
const wayBetween = (edges: ReadonlyArray<ContextEdge>, start: string, goal: string): Array<string> | undefined => {
  const cameFrom = new Map<string, string | undefined>([[start, undefined]])
  const queue = [start]
  for (let context = queue.shift(); context !== undefined; context = queue.shift()) {
    if (context === goal) {
      const way = [context]
      for (let before = cameFrom.get(context); before !== undefined; before = cameFrom.get(before)) way.unshift(before)
      return way
    }
    for (const edge of edges) {
      if (edge.from === context && !cameFrom.has(edge.to)) {
        cameFrom.set(edge.to, context)
        queue.push(edge.to)
      }
    }
  }
  return undefined
}

/** Every import on a cycle between contexts: it goes `from -> to` while `to` already reaches `from`. */
export const contextCycles = (edges: ReadonlyArray<ContextEdge>): Array<Violation> =>
  edges.flatMap((edge): Array<Violation> => {
    const back = wayBetween(edges, edge.to, edge.from)
    return back === undefined ? [] : [{
      file: edge.file,
      line: edge.line,
      specifier: edge.specifier,
      reason: `closes the cycle ${[edge.from, ...back].join(" -> ")}`
    }]
  })

/** Outside the domain, a context is its package entry `@podium/domain/<context>` (and, for tests, `…/memory`). */
export const domainEntryRule: Rule = (specifier) =>
  specifier.startsWith("@podium/domain") && !/^@podium\/domain\/[a-z]+(\/memory)?$/.test(specifier)
    ? "import a domain context through its entry, `@podium/domain/<context>`"
    : undefined

/** The test support beside the domain's tests (`testing/`) is test code too. */
const isTestCode = (file: string) => isTestFile(file) || isInside(join(domainSrc, "testing"), file)

/** A context's memory entry (`memory.ts`) or one of its memory adapters (`*Memory.ts`). */
const isMemoryFile = (path: string) => isInside(domainSrc, path) && /^(memory|[A-Za-z]+Memory)\.ts$/.test(basename(path))

/**
 * Memory adapters are for tests: in a package's `src/`, only tests, the domain's test support and
 * the memory adapters themselves import `@podium/domain/<context>/memory`, a `memory.ts` or a
 * `*Memory.ts`. (test/ and bench/ may.)
 */
export const memoryRule: Rule = (specifier, file) => {
  if (isTestCode(file) || isMemoryFile(file)) return undefined
  const memory = isRelative(specifier)
    ? isMemoryFile(resolve(dirname(file), specifier))
    : /^@podium\/domain\/[a-z]+\/memory$/.test(specifier)
  return memory ? "memory adapters are for tests: only test code imports them" : undefined
}

export const adapterRule: Rule = (specifier, file) => {
  if (isRelative(specifier)) return stayInPackage(specifier, file)
  const own = `@podium/${relative(packagesDir, packageDirOf(file))}`
  if (specifier === "@podium/server" || specifier.startsWith("@podium/server/")) {
    return "nothing imports the server: it composes the adapters"
  }
  const adapter = /^@podium\/(adapters-[^/]+)/.exec(specifier)
  if (adapter !== null && `@podium/${adapter[1]}` !== own) return "an adapter does not import another adapter"
  return domainEntryRule(specifier, file)
}

const httpSrc = join(packagesDir, "adapters-http", "src")

/**
 * The HTTP contract (`api/`, `<context>/*Api.ts`, the context's errors, `<context>/*Errors.ts`, and
 * views other contexts' contracts embed, `<context>/*View.ts`): what clients import, so it holds no server code.
 */
const isContractFile = (file: string) => isInside(join(httpSrc, "api"), file) || /(Api|Errors|View)\.ts$/.test(file)

export const contractRule: Rule = (specifier, file) => {
  if (!isRelative(specifier)) return undefined
  const target = resolve(dirname(file), specifier)
  return isContractFile(target) || !isInside(httpSrc, target)
    ? undefined
    : "the contract imports only the contract (and the domain), not handlers"
}

const webAppSrc = join(packagesDir, "web", "src", "app")

/** What the browser app may use besides our contract: its UI, Effect, and the OpenID Connect client. */
const browserPackages = ["preact", "effect", "oauth4webapi"]

/**
 * The browser app runs in the reader's browser: it imports those packages, the HTTP contract (the
 * typed client's source) and domain entries, and nothing of Node or of the server's adapters.
 */
export const webAppRule: Rule = (specifier, file) => {
  if (isRelative(specifier)) {
    return isInside(webAppSrc, resolve(dirname(file), specifier)) ? undefined : "the app imports only its own files"
  }
  if (browserPackages.some((name) => specifier === name || specifier.startsWith(`${name}/`))) return undefined
  const contract = /^@podium\/adapters-http\/(api\/[A-Za-z]+|[a-z]+\/[A-Za-z]+Api)$/.test(specifier)
  if (contract) return undefined
  if (specifier.startsWith("@podium/domain")) return domainEntryRule(specifier, file)
  return `the app imports ${browserPackages.join(", ")}, the HTTP contract and domain entries only`
}

const sourceExtension = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => sourceExtension.test(path) && !path.split(sep).includes("node_modules"))
    .map((path) => join(dir, path))
    .sort()

const checkDir = (dir: string, rule: Rule): Array<Violation> =>
  sourceFiles(dir).flatMap((file) => check(file, readFileSync(file, "utf8"), rule))

const checkPackage = (packageDir: string, rule: Rule): Array<Violation> =>
  sourceFiles(packageDir).flatMap((file) => check(file, readFileSync(file, "utf8"), rule))

const format = (violations: Array<Violation>) =>
  violations.map((v) => `${v.file}:${v.line} imports "${v.specifier}": ${v.reason}`).join("\n")

const adapterDirs = readdirSync(packagesDir)
  .filter((name) => name.startsWith("adapters-"))
  .map((name) => join(packagesDir, name))

describe("import boundaries", () => {
  it("packages/domain imports only effect core modules and its own files", () => {
    const domainDir = join(packagesDir, "domain")
    expect(sourceFiles(join(domainDir, "src")).length).toBeGreaterThan(0)
    const violations = checkPackage(domainDir, domainRule)
    expect(violations, format(violations)).toEqual([])
  })

  it("domain contexts reach each other only through their index.ts", () => {
    const violations = checkDir(domainSrc, contextRule)
    expect(violations, format(violations)).toEqual([])
  })

  it("domain contexts depend on each other one way: no cycle, type imports included", () => {
    const edges = sourceFiles(domainSrc).flatMap((file) => contextEdges(file, readFileSync(file, "utf8")))
    expect(edges.length).toBeGreaterThan(10)
    const violations = contextCycles(edges)
    expect(violations, format(violations)).toEqual([])
  })

  it("shared/ imports no context", () => {
    const edges = sourceFiles(join(domainSrc, "shared")).flatMap((file) => contextEdges(file, readFileSync(file, "utf8")))
    const violations = edges.map((edge): Violation => ({ ...edge, reason: `shared depends on no context, not "${edge.to}"` }))
    expect(violations, format(violations)).toEqual([])
  })

  it("code outside the domain imports a context only through @podium/domain/<context>", () => {
    const outside = [join(packagesDir, "server"), join(root, "test"), join(root, "bench")]
    const violations = outside.flatMap((dir) => checkDir(dir, domainEntryRule))
    expect(violations, format(violations)).toEqual([])
  })

  it("no code in packages/*/src but tests imports a memory adapter", () => {
    const sources = readdirSync(packagesDir).flatMap((name) => sourceFiles(join(packagesDir, name, "src")))
    expect(sources.filter((file) => basename(file) === "memory.ts").length).toBeGreaterThan(5)
    const violations = sources.flatMap((file) => check(file, readFileSync(file, "utf8"), memoryRule))
    expect(violations, format(violations)).toEqual([])
  })

  it("the HTTP contract imports no handler, so clients can import it alone", () => {
    const contract = sourceFiles(httpSrc).filter(isContractFile)
    expect(contract.length).toBeGreaterThan(5)
    const violations = contract.flatMap((file) => check(file, readFileSync(file, "utf8"), contractRule))
    expect(violations, format(violations)).toEqual([])
  })

  it("the browser app imports only what runs in a browser: preact, effect, oauth4webapi, the contract, domain entries", () => {
    expect(sourceFiles(webAppSrc).length).toBeGreaterThan(3)
    const violations = checkDir(webAppSrc, webAppRule)
    expect(violations, format(violations)).toEqual([])
  })

  it("adapters import neither the server nor another adapter", () => {
    expect(adapterDirs.length).toBeGreaterThan(0)
    const violations = adapterDirs.flatMap((dir) => checkPackage(dir, adapterRule))
    expect(violations, format(violations)).toEqual([])
  })
})

/** The lines of a file's `as` casts that `matches` picks. */
const castLines = (fileName: string, source: string, matches: (cast: Node) => boolean): Array<number> => {
  const parsed = parseSync(fileName, source, { lang: fileName.endsWith(".tsx") ? "tsx" : "ts", sourceType: "module" })
  const lineOf = (offset: number) => source.slice(0, offset).split("\n").length
  const lines: Array<number> = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit)
    if (typeof value !== "object" || value === null) return
    if (isNode(value) && value.type === "TSAsExpression" && matches(value)) lines.push(lineOf(value.start))
    for (const [key, child] of Object.entries(value)) {
      if (key !== "parent") visit(child)
    }
  }
  visit(parsed.program)
  return lines
}

/** Each `as never` and `as unknown as` in a file: casts that silence the type checker instead of building a typed value. */
export const silencingCasts = (fileName: string, source: string): Array<number> =>
  castLines(fileName, source, (cast) => {
    const type = cast["typeAnnotation"]
    const inner = cast["expression"]
    const viaUnknown = isNode(inner) && inner.type === "TSAsExpression" && isNode(inner["typeAnnotation"]) &&
      inner["typeAnnotation"].type === "TSUnknownKeyword"
    return (isNode(type) && type.type === "TSNeverKeyword") || viaUnknown
  })

/** A type naming an id: a name ending in `Id` (`LeaderboardId`, `Ids.RunId`), alone or in a union (`CaseId | null`). */
const namesAnId = (type: unknown): boolean => {
  if (!isNode(type)) return false
  if (type.type === "TSUnionType") return Array.isArray(type["types"]) && type["types"].some(namesAnId)
  if (type.type !== "TSTypeReference") return false
  const name = type["typeName"]
  const last = isNode(name) && name.type === "TSQualifiedName" ? name["right"] : name
  return isNode(last) && typeof last["name"] === "string" && /^[A-Z]\w*Id$/.test(last["name"])
}

/** Each cast to an id type in a file: an id is made as its kind (`ids.make(RunId)`) or decoded, never asserted. */
export const idCasts = (fileName: string, source: string): Array<number> =>
  castLines(fileName, source, (cast) => namesAnId(cast["typeAnnotation"]))

describe("casts", () => {
  it("no `as never` nor `as unknown as` in packages/*/src: values are decoded or built with their type", () => {
    const sources = readdirSync(packagesDir).flatMap((name) => sourceFiles(join(packagesDir, name, "src")))
    expect(sources.length).toBeGreaterThan(50)
    const found = sources.flatMap((file) => silencingCasts(file, readFileSync(file, "utf8")).map((line) => `${relative(root, file)}:${line}`))
    expect(found).toEqual([])
  })

  it("finds `as never` and `as unknown as` in code, not in comments or strings", () => {
    const source = "const a = 1 as never\n// b as never\nconst c = \"d as never\"\nf(g as never, h)\nconst i = j as unknown as K\nconst l = m as unknown\n"
    expect(silencingCasts("a.ts", source)).toEqual([1, 4, 5])
  })

  // the browser app (packages/web) is left out: it still casts the ids of its routes' paths, read from the URL
  it("no `as <Name>Id` in packages/*/src but tests and the browser app: ids are typed where they are stored, passed and made", () => {
    const sources = readdirSync(packagesDir).filter((name) => name !== "web")
      .flatMap((name) => sourceFiles(join(packagesDir, name, "src")))
      .filter((file) => !/\.test\.tsx?$/.test(file))
    expect(sources.length).toBeGreaterThan(50)
    const found = sources.flatMap((file) => idCasts(file, readFileSync(file, "utf8")).map((line) => `${relative(root, file)}:${line}`))
    expect(found).toEqual([])
  })

  it("finds casts to id types, alone, qualified or in a union, and no other casts", () => {
    const source = "const a = b as LeaderboardId\nconst c = d as CaseId | null\nconst e = f as Ids.RunId\n" +
      "const g = h as Identity\nconst i = j as Model[\"id\"]\n// k as RunId\nconst l = m as Paid\nconst n = \"o as RunId\"\n"
    expect(idCasts("a.ts", source)).toEqual([1, 2, 3])
  })
})

describe("the import checker", () => {
  const domainFile = join(packagesDir, "domain", "src", "ports", "Sample.ts")
  const httpFile = join(packagesDir, "adapters-http", "src", "handlers", "Sample.ts")
  const specifiers = (file: string, source: string, rule: Rule) => check(file, source, rule).map((v) => v.specifier)

  it("flags Node, handlers and the server in the browser app", () => {
    const appFile = join(packagesDir, "web", "src", "app", "Sample.tsx")
    const source = `
      import { render } from "preact"
      import { useState } from "preact/hooks"
      import { Effect } from "effect"
      import { HttpApiClient } from "effect/http-api"
      import { Api } from "@podium/adapters-http/api/Api"
      import { HumanApi } from "@podium/adapters-http/human/HumanApi"
      import type { CaseId } from "@podium/domain/human"
      import { Field } from "./ui.tsx"
      import { readFile } from "node:fs/promises"
      import { HumanHttp } from "@podium/adapters-http/human/HumanHttp"
      import { Assets } from "../Assets.ts"
      import { App } from "@podium/server/App"
      const el = <p>{String(render)}</p>
    `
    expect(specifiers(appFile, source, webAppRule)).toEqual([
      "node:fs/promises",
      "@podium/adapters-http/human/HumanHttp",
      "../Assets.ts",
      "@podium/server/App"
    ])
  })

  it("flags node and @effect imports in the domain", () => {
    const source = [
      `import { x } from "node:fs"`,
      `import { PgClient } from "@effect/sql-pg"`,
      `import { Effect } from "effect"`
    ].join("\n")
    const violations = check(domainFile, source, domainRule)
    expect(violations.map((v) => [v.specifier, v.line])).toEqual([["node:fs", 1], ["@effect/sql-pg", 2]])
    expect(violations[0]?.file).toBe(join("packages", "domain", "src", "ports", "Sample.ts"))
  })

  it("allows effect core modules, type imports and the domain's own files", () => {
    const source = `
      import { Effect, Schema } from "effect"
      import * as Option from "effect/Option"
      import type { Simplify } from "effect/Types"
      import { TestClock } from "effect/testing"
      import { UserId } from "../Ids.ts"
      export * from "./Mailer.ts"
      export type { Principal } from "../Principal.ts"
      const later = () => import("effect/DateTime")
    `
    expect(specifiers(domainFile, source, domainRule)).toEqual([])
  })

  it("flags platform modules, other packages and every import form", () => {
    const source = `
      import { SqlClient } from "effect/sql"
      import { HttpApi } from "effect/http-api"
      import { Model } from "effect/schema"
      import type { Agent } from "undici"
      export { jwtVerify } from "jose"
      export * from "node:path"
      import "@podium/adapters-pg/Migrations"
      import {
        App
      } from "@podium/server/App"
      import { WorkspaceRepositoryPg } from "../../../adapters-pg/src/WorkspaceRepositoryPg.ts"
      type Verify = typeof import("jose").jwtVerify
      const crypto = await import("node:crypto")
      const dynamic = await import(process.env.MODULE!)
      const fs = require("fs")
    `
    expect(specifiers(domainFile, source, domainRule)).toEqual([
      "effect/sql",
      "effect/http-api",
      "effect/schema",
      "undici",
      "jose",
      "node:path",
      "@podium/adapters-pg/Migrations",
      "@podium/server/App",
      "../../../adapters-pg/src/WorkspaceRepositoryPg.ts",
      "jose",
      "node:crypto",
      "<computed>",
      "fs"
    ])
  })

  it("allows test tools in the domain's test files only", () => {
    const source = [
      `import { describe, it } from "@effect/vitest"`,
      `import { expect } from "vitest"`,
      `import fc from "fast-check"`
    ].join("\n")
    expect(specifiers(domainFile.replace(/\.ts$/, ".test.ts"), source, domainRule)).toEqual([])
    expect(specifiers(domainFile, source, domainRule)).toEqual(["@effect/vitest", "vitest", "fast-check"])
  })

  it("ignores import-like text in comments and strings", () => {
    const source = [
      `// import { x } from "node:fs"`,
      `/* export * from "undici" */`,
      "const example = `import jose from \"jose\"`",
      `const text = 'await import("node:os")'`
    ].join("\n")
    expect(specifiers(domainFile, source, domainRule)).toEqual([])
  })

  it("keeps handlers out of the contract", () => {
    const apiFile = join(httpSrc, "human", "HumanApi.ts")
    const source = `
      import { Errors } from "../api/Errors.ts"
      import { LeaderboardView } from "../leaderboards/LeaderboardsApi.ts"
      import { StaleRevision } from "./HumanErrors.ts"
      import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
      import { caseView } from "./HumanHttp.ts"
    `
    expect(specifiers(apiFile, source, contractRule)).toEqual(["../handlers/ErrorMapping.ts", "./HumanHttp.ts"])
  })

  it("keeps contexts out of each other's internals", () => {
    const humanFile = join(domainSrc, "human", "Sample.ts")
    const source = `
      import { HumanCase } from "./HumanCase.ts"
      import { Leaderboard } from "../leaderboards/index.ts"
      import type { Candidate } from "../leaderboards/Candidate.ts"
      export { UserId } from "../shared/Ids.ts"
      import { Scope } from "../access/internal/Scope.ts"
    `
    expect(specifiers(humanFile, source, contextRule)).toEqual([
      "../leaderboards/Candidate.ts",
      "../shared/Ids.ts",
      "../access/internal/Scope.ts"
    ])
    const outside = `
      import { Leaderboard } from "@podium/domain/leaderboards"
      import { UserId } from "@podium/domain/shared/Ids"
      import { Invite } from "@podium/domain/access/index.ts"
      import { Effect } from "effect"
    `
    expect(specifiers(httpFile, outside, domainEntryRule)).toEqual([
      "@podium/domain/shared/Ids",
      "@podium/domain/access/index.ts"
    ])
  })

  it("keeps memory adapters in tests", () => {
    const source = `
      import { RunRepository } from "@podium/domain/runs"
      import { RunRepositoryMemory } from "@podium/domain/runs/memory"
      import { LeaderboardRepositoryMemory } from "../leaderboards/memory.ts"
      import { RunRepositoryMemory as Direct } from "./RunRepositoryMemory.ts"
      import { Run } from "./Run.ts"
    `
    const runsFile = join(domainSrc, "runs", "Sample.ts")
    const memoryImports = ["@podium/domain/runs/memory", "../leaderboards/memory.ts", "./RunRepositoryMemory.ts"]
    expect(specifiers(runsFile, source, memoryRule)).toEqual(memoryImports)
    expect(specifiers(httpFile, source, memoryRule)).toEqual(["@podium/domain/runs/memory"])
    expect(specifiers(runsFile.replace(/\.ts$/, ".test.ts"), source, memoryRule)).toEqual([])
    expect(specifiers(join(domainSrc, "testing", "index.ts"), source, memoryRule)).toEqual([])
    expect(specifiers(join(domainSrc, "runs", "memory.ts"), source, memoryRule)).toEqual([])
    expect(specifiers(runsFile, source, contextRule)).toEqual([])
    expect(specifiers(httpFile, source, domainEntryRule)).toEqual([])
  })

  it("finds the imports between contexts, type-only ones too, but not a test's use of the test support", () => {
    const source = `
      import { Effect } from "effect"
      import { Trace } from "./Trace.ts"
      import type { Candidate } from "../leaderboards/index.ts"
      export type { WorkspaceId } from "../shared/index.ts"
      import { uuid } from "../testing/index.ts"
      type Members = typeof import("../access/index.ts")
    `
    const edgesOf = (file: string) => contextEdges(file, source).map((e) => [e.from, e.to, e.line])
    const inferenceFile = join(domainSrc, "inference", "Sample.ts")
    expect(edgesOf(inferenceFile)).toEqual([
      ["inference", "leaderboards", 4],
      ["inference", "shared", 5],
      ["inference", "testing", 6],
      ["inference", "access", 7]
    ])
    expect(edgesOf(inferenceFile.replace(/\.ts$/, ".test.ts")).map(([, to]) => to)).toEqual(["leaderboards", "shared", "access"])
    expect(contextEdges(httpFile, source)).toEqual([])
  })

  it("names each import that closes a cycle between contexts", () => {
    const edge = (from: string, to: string, line: number): ContextEdge => ({ from, to, line, file: `${from}.ts`, specifier: `../${to}/index.ts` })
    const oneWay = [edge("runs", "leaderboards", 1), edge("leaderboards", "shared", 2), edge("runs", "shared", 3)]
    expect(contextCycles(oneWay)).toEqual([])
    const cycles = contextCycles([...oneWay, edge("shared", "access", 4), edge("access", "runs", 5), edge("inference", "shared", 6)])
    expect(cycles.map((v) => [v.line, v.reason])).toEqual([
      [1, "closes the cycle runs -> leaderboards -> shared -> access -> runs"],
      [2, "closes the cycle leaderboards -> shared -> access -> runs -> leaderboards"],
      [3, "closes the cycle runs -> shared -> access -> runs"],
      [4, "closes the cycle shared -> access -> runs -> shared"],
      [5, "closes the cycle access -> runs -> shared -> access"]
    ])
  })

  it("keeps adapters off the server and off each other", () => {
    const source = `
      import { Api } from "@podium/adapters-http/api/Api"
      import { UserId } from "@podium/domain/shared"
      import { PgClient } from "@effect/sql-pg"
      import { TokensApi } from "../api/TokensApi.ts"
      import { makeApp } from "@podium/server/App"
      import { Migrations } from "@podium/adapters-pg/Migrations"
      import { MailerSmtp } from "../../../adapters-providers/src/MailerSmtp.ts"
    `
    expect(specifiers(httpFile, source, adapterRule)).toEqual([
      "@podium/server/App",
      "@podium/adapters-pg/Migrations",
      "../../../adapters-providers/src/MailerSmtp.ts"
    ])
  })
})
