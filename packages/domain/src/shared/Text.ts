/**
 * Text that PostgreSQL can store. Postgres refuses U+0000 in `text` and `jsonb`, and a lone UTF-16
 * surrogate cannot be encoded as UTF-8 at all. Text we did not write ourselves (upstream answers,
 * provider errors) is stored with both replaced by U+FFFD; what the client gets is untouched.
 */

// With the `u` flag a surrogate pair is one code point, so only NUL and lone surrogates match.
const unstorable = /[\u0000\uD800-\uDFFF]/gu
const unstorableTest = /[\u0000\uD800-\uDFFF]/u

/** True when Postgres can store `text` as it is: the one rule for text from outside (requests, catalogues). */
export const isStorableText = (text: string): boolean => !unstorableTest.test(text)

/** At most `max` UTF-16 units of `text`, one fewer rather than half of a surrogate pair. */
export const truncateText = (text: string, max: number): string => {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}

/** `text` with U+0000 and lone surrogates replaced by U+FFFD. */
export const storableText = (text: string): string => isStorableText(text) ? text : text.replace(unstorable, "\uFFFD")

/** A plain object (a literal's, JSON.parse's, or one made without a prototype, as some decoders make). */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** A JSON value with every string in it (keys too) made storable. */
export const storableJson = <A>(value: A): A => {
  if (typeof value === "string") return storableText(value) as A
  if (Array.isArray(value)) return value.map(storableJson) as A
  // own properties, a "__proto__" key included (an assignment would set the prototype instead)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [storableText(key), storableJson(inner)])) as A
  return value
}

// JSON.stringify writes U+0000 as \u0000 and a lone surrogate as \udXXX; Postgres's jsonb refuses both.
// A backslash written out as \\ before "u0000" matches too: that text only takes the longer way.
const unstorableEscape = /\\u(?:0000|d[89a-f])/

/**
 * `value` as JSON text with every string in it (keys too) made storable, as
 * `JSON.stringify(storableJson(value))` but without copying the value when nothing in it needs
 * replacing (the common case): its JSON text is checked for the escapes Postgres refuses.
 */
export const storableJsonText = (value: unknown): string => {
  const text = JSON.stringify(value)
  return unstorableEscape.test(text) ? JSON.stringify(storableJson(value)) : text
}
