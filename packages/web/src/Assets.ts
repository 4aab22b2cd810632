import { createHash } from "node:crypto"
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { gzipSync } from "node:zlib"

/**
 * The browser app as the server serves it: `index.html` and content-addressed assets under
 * `/assets/`. Built by rolldown from `src/app/main.tsx` (and its CSS); written to `dist/` by
 * `npm run build:web` (run by `npm ci` and `npm start`), or built in memory when `dist/` is absent.
 */

export interface Asset {
  readonly path: string
  readonly contentType: string
  readonly bytes: Uint8Array
}

export const distDir = join(import.meta.dirname, "..", "dist")
const entry = join(import.meta.dirname, "app", "main.tsx")
const stylesheet = join(import.meta.dirname, "app", "styles.css")

const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 12)

const page = (script: string, style: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Podium</title>
<link rel="icon" href="data:,">
<!--podium-config-->
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<noscript>Podium's web app needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`

/** Bundles the app (minified ES module) and its stylesheet into the files the server serves. */
export const buildAssets = async (): Promise<ReadonlyArray<Asset>> => {
  const { build } = await import("rolldown")
  const output = await build({
    input: entry,
    write: false,
    platform: "browser",
    tsconfig: join(import.meta.dirname, "..", "tsconfig.json"),
    // JSX as the tsconfig says (preact's automatic runtime)
    transform: { define: { "process.env.NODE_ENV": JSON.stringify("production") } },
    output: { format: "esm", minify: true, codeSplitting: false }
  })
  const chunk = output.output.find((file) => file.type === "chunk")
  if (chunk === undefined) throw new Error("rolldown produced no chunk")
  const script = new TextEncoder().encode(chunk.code)
  const style = await readFile(stylesheet)
  const scriptName = `app-${hashOf(script)}.js`
  const styleName = `app-${hashOf(style)}.css`
  return [
    { path: "/", contentType: "text/html; charset=utf-8", bytes: new TextEncoder().encode(page(scriptName, styleName)) },
    { path: `/assets/${scriptName}`, contentType: "text/javascript; charset=utf-8", bytes: script },
    { path: `/assets/${styleName}`, contentType: "text/css; charset=utf-8", bytes: style }
  ]
}

const fileNameOf = (path: string) => path === "/" ? "index.html" : path.slice("/assets/".length)
const contentTypeOf = (name: string) =>
  name.endsWith(".html") ? "text/html; charset=utf-8" : name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8"

/** Where the server puts the page's settings (`<meta name="podium-config">`, see `withConfig`). */
export const configMarker = "<!--podium-config-->"

const escapeAttribute = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** The page with its settings for the app (read by `src/app/Config.ts`) in place of the marker. */
export const withConfig = (page: string, config: unknown): string =>
  page.replace(configMarker, `<meta name="podium-config" content="${escapeAttribute(JSON.stringify(config))}">`)

/** Writes a fresh build to `dir`, replacing the previous one in one rename. */
export const writeAssets = async (dir: string = distDir): Promise<ReadonlyArray<Asset>> => {
  const assets = await buildAssets()
  const next = `${dir}.${process.pid}.tmp`
  await rm(next, { recursive: true, force: true })
  await mkdir(next, { recursive: true })
  for (const asset of assets) await writeFile(join(next, fileNameOf(asset.path)), asset.bytes)
  await rm(dir, { recursive: true, force: true })
  await rename(next, dir)
  return assets
}

/** The built files in `dir`, or undefined when there is no build there. */
export const readAssets = async (dir: string = distDir): Promise<ReadonlyArray<Asset> | undefined> => {
  const names = await readdir(dir).catch(() => undefined)
  if (names === undefined || !names.includes("index.html")) return undefined
  return Promise.all(names.map(async (name) => ({
    path: name === "index.html" ? "/" : `/assets/${name}`,
    contentType: contentTypeOf(name),
    bytes: await readFile(join(dir, name))
  })))
}

/** What the build ships to the browser, gzipped, in bytes (the budget is 300 kB of JavaScript). */
export const gzippedScriptBytes = (assets: ReadonlyArray<Asset>) =>
  assets.filter((a) => a.path.endsWith(".js")).reduce((n, a) => n + gzipSync(a.bytes).length, 0)

if (import.meta.main) {
  const assets = await writeAssets()
  console.log(`web app built in ${distDir}: ${assets.map((a) => a.path).join(", ")} (${gzippedScriptBytes(assets)} bytes of JavaScript gzipped)`)
}
