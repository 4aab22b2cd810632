import { readdirSync, readFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * One port per file, named as what it is (STYLE.md 4 and 21): a domain file that exports a
 * `Context.Service` exports exactly one, and is named after it, so entity and repository files
 * keep only their own subject.
 */

const domainSrc = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "packages", "domain", "src")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [join(dir, entry.name)] : []
  )

/** The exported services a source declares, in order. */
export const exportedPorts = (source: string): Array<string> =>
  [...source.matchAll(/^export class (\w+) extends Context\.Service\b/gm)].map((match) => match[1]!)

/** Why `file` breaks the rule, or `undefined`. */
export const portFileProblem = (file: string, ports: ReadonlyArray<string>): string | undefined => {
  if (ports.length === 0) return undefined
  const name = basename(file, ".ts")
  if (ports.length > 1) return `${file} holds ${ports.length} ports (${ports.join(", ")}): one port per file`
  return ports[0] === name ? undefined : `${file} holds the port ${ports[0]}: move it to ${ports[0]}.ts`
}

describe("domain ports", () => {
  it("the rule names a second port and a port in a file named otherwise", () => {
    const source = [
      "export class Order extends Context.Service<Order, {}>()(\"@podium/domain/x/Order\") {}",
      "export class OrderQueue extends Context.Service<OrderQueue, {}>()(\"@podium/domain/x/OrderQueue\") {}"
    ].join("\n")
    expect(exportedPorts(source)).toEqual(["Order", "OrderQueue"])
    expect(portFileProblem("x/Order.ts", exportedPorts(source))).toContain("2 ports")
    expect(portFileProblem("x/Entity.ts", ["OrderQueue"])).toContain("move it to OrderQueue.ts")
    expect(portFileProblem("x/OrderQueue.ts", ["OrderQueue"])).toBeUndefined()
    expect(portFileProblem("x/Entity.ts", [])).toBeUndefined()
  })

  it("every domain file exports at most one port, named as the file", () => {
    const problems = sourceFiles(domainSrc).flatMap((file) => {
      const problem = portFileProblem(relative(domainSrc, file), exportedPorts(readFileSync(file, "utf8")))
      return problem === undefined ? [] : [problem]
    })
    expect(problems).toEqual([])
  })
})
