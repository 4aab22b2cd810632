import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type Asset, buildAssets, readAssets, withConfig, writeAssets } from "./Assets.ts"

describe("the web app's assets", () => {
  it("builds a page that loads its content-addressed script and stylesheet", async () => {
    const assets = await buildAssets()
    const page = new TextDecoder().decode(assets.find((a) => a.path === "/")!.bytes)
    const others = assets.filter((a) => a.path !== "/").map((a) => a.path)
    expect(others).toHaveLength(2)
    for (const path of others) {
      expect(path).toMatch(/^\/assets\/app-[0-9a-f]{12}\.(js|css)$/)
      expect(page).toContain(path)
    }
    // the same sources make the same names, so a browser's cached copy stays right
    expect((await buildAssets()).map((a) => a.path)).toEqual(assets.map((a) => a.path))
  })

  it("writes a build that reads back the same, and reads nothing where there is none", async () => {
    const dir = await mkdtemp(join(tmpdir(), "podium-web-"))
    try {
      expect(await readAssets(join(dir, "dist"))).toBeUndefined()
      const written = await writeAssets(join(dir, "dist"))
      const read = await readAssets(join(dir, "dist"))
      const byPath = (xs: ReadonlyArray<Asset>) => [...xs].sort((a, b) => a.path.localeCompare(b.path))
      expect(byPath(read!).map((a) => [a.path, a.contentType, Buffer.from(a.bytes).toString("base64")])).toEqual(
        byPath(written).map((a) => [a.path, a.contentType, Buffer.from(a.bytes).toString("base64")])
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("puts the settings in the page as an attribute no value can break out of", async () => {
    const page = new TextDecoder().decode((await buildAssets()).find((a) => a.path === "/")!.bytes)
    const hostile = { oidc: { issuer: `https://x/"><script>alert(1)</script>&`, client_id: "c" } }
    const html = withConfig(page, hostile)
    const content = /<meta name="podium-config" content="([^"]*)">/.exec(html)?.[1]
    expect(content).toBeDefined()
    expect(html).not.toContain("<script>alert")
    const decoded = content!.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    expect(JSON.parse(decoded)).toEqual(hostile)
  })
})
