import { readdirSync, readFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

/**
 * `npm ci --omit=dev && npm start` installs only `dependencies`: whatever the service imports at
 * run time must be a dependency of its package (or the root), and the Node the scripts run on too.
 */
const root = join(import.meta.dirname, "..")
const json = (path: string) => JSON.parse(readFileSync(path, "utf8"))
const rootPackage = json(join(root, "package.json"))

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "testing" ? [] : sources(path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : []
  })

const packageOf = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!

describe("a production install", () => {
  it("runs npm scripts on the Node the service needs: node is a dependency, not a devDependency", () => {
    expect(rootPackage.dependencies?.node).toMatch(/^24\./)
    expect(rootPackage.devDependencies?.node).toBeUndefined()
  })

  it("has every package the service imports at run time among its dependencies", () => {
    const missing: Array<string> = []
    for (const name of readdirSync(join(root, "packages"))) {
      const dir = join(root, "packages", name)
      const declared = new Set([
        ...Object.keys(json(join(dir, "package.json")).dependencies ?? {}),
        ...Object.keys(rootPackage.dependencies ?? {})
      ])
      for (const file of sources(join(dir, "src"))) {
        const text = readFileSync(file, "utf8")
        for (const [, specifier] of text.matchAll(/^(?:import|export)[^"']*?from\s+["']([^"'.][^"']*)["']/gm)) {
          const pkg = packageOf(specifier!)
          if (pkg.startsWith("node:") || builtinModules.includes(pkg) || declared.has(pkg)) continue
          missing.push(`${file.slice(root.length + 1)} imports ${pkg}`)
        }
      }
    }
    expect(missing).toEqual([])
  })
})
