/**
 * Input no route can store or should walk, refused once for every route before any of them runs:
 * U+0000 and lone surrogates (PostgreSQL refuses both in text and jsonb) anywhere in a JSON body,
 * its keys included, or in the URL; and JSON nested deeper than `maxJsonDepth`.
 */
import { isStorableText } from "@podium/domain/shared"

/** The deepest nesting of objects and arrays a JSON body may have. */
export const maxJsonDepth = 32

export interface InputIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

const stringIssue = (text: string): string | undefined =>
  !isStorableText(text)
    ? text.includes("\u0000") ? "Expected text without U+0000" : "Expected text without lone surrogates"
    : undefined

/**
 * The deepest nesting in JSON text, counted without parsing (brackets inside strings do not
 * count), and whether any string holds a `\u` escape: only an escape can put U+0000 or a lone
 * surrogate into valid JSON decoded from UTF-8.
 */
const scan = (text: string): { readonly depth: number; readonly escapes: boolean } => {
  let depth = 0
  let deepest = 0
  let escapes = false
  // the next backslash at or after where a string is being read (-1: none left); found once, reused
  let slash = text.indexOf("\\")
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // a string: jump from quote to quote (natively), stopping only at escapes
      let from = i + 1
      for (;;) {
        const quote = text.indexOf("\"", from)
        if (quote === -1) return { depth: deepest, escapes } // unterminated: the JSON parser refuses it
        if (slash !== -1 && slash < from) slash = text.indexOf("\\", from)
        if (slash === -1 || slash > quote) {
          i = quote + 1
          break
        }
        if (text.charCodeAt(slash + 1) === 117) escapes = true // \u
        from = slash + 2
        slash = text.indexOf("\\", from)
      }
      continue
    }
    if (c === 123 || c === 91) {
      if (++depth > deepest) deepest = depth
    } else if (c === 125 || c === 93) {
      depth--
    }
    i++
  }
  return { depth: deepest, escapes }
}

const walk = (value: unknown, path: Array<string | number>): InputIssue | undefined => {
  if (typeof value === "string") {
    const message = stringIssue(value)
    return message === undefined ? undefined : { path: [...path], message }
  }
  if (typeof value !== "object" || value === null) return undefined
  if (path.length >= maxJsonDepth + 1) {
    return { path: [...path], message: `Expected JSON nested at most ${maxJsonDepth} levels deep` }
  }
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value)
  for (const [key, inner] of entries) {
    if (typeof key === "string") {
      const message = stringIssue(key)
      if (message !== undefined) return { path: [...path, key], message: `${message} in a key` }
    }
    path.push(key)
    const issue = walk(inner, path)
    path.pop()
    if (issue !== undefined) return issue
  }
  return undefined
}

/**
 * The first thing in a JSON body no route accepts, with its path (`["payload", ...]`), or undefined.
 * Text that is not JSON is left to the route's own decoding, which answers it. With `depthOnly`
 * (routes that judge each item of a batch alone) only the nesting is checked here.
 */
export const jsonBodyIssue = (text: string, options?: { readonly depthOnly?: boolean }): InputIssue | undefined => {
  const { depth, escapes } = scan(text)
  if (depth <= maxJsonDepth && (!escapes || options?.depthOnly === true)) return undefined
  if (options?.depthOnly === true) return { path: ["payload"], message: `Expected JSON nested at most ${maxJsonDepth} levels deep` }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return depth > maxJsonDepth
      ? { path: ["payload"], message: `Expected JSON nested at most ${maxJsonDepth} levels deep` }
      : undefined
  }
  return walk(parsed, ["payload"])
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A body's bytes as text, or undefined when they are not UTF-8 (invalid, overlong, surrogate or cut
 * sequences): JSON between systems is UTF-8 (RFC 8259), and a lenient decoder would store U+FFFD in
 * place of what the caller sent.
 */
export const utf8Text = (bytes: Uint8Array): string | undefined => {
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

const decoded = (part: string): string | undefined => {
  try {
    return decodeURIComponent(part)
  } catch {
    return undefined
  }
}

/** A URL whose path or query does not decode to text a route can store, or undefined. */
export const urlIssue = (url: string): InputIssue | undefined => {
  const at = url.indexOf("?")
  const path = at === -1 ? url : url.slice(0, at)
  const query = at === -1 ? "" : url.slice(at + 1)
  const pathText = decoded(path)
  if (pathText === undefined) return { path: ["params"], message: "Expected a path of percent-encoded UTF-8" }
  if (stringIssue(pathText) !== undefined) return { path: ["params"], message: stringIssue(pathText)! }
  for (const pair of query.split("&")) {
    if (pair === "") continue
    const [rawKey = "", ...rest] = pair.split("=")
    const key = decoded(rawKey.replaceAll("+", " "))
    const value = decoded(rest.join("=").replaceAll("+", " "))
    if (key === undefined || value === undefined) {
      return { path: ["query", key ?? rawKey], message: "Expected a query of percent-encoded UTF-8" }
    }
    const message = stringIssue(key) ?? stringIssue(value)
    if (message !== undefined) return { path: ["query", stringIssue(key) === undefined ? key : "(key)"], message }
  }
  return undefined
}
