/**
 * Which dataset rows a run asks about when it samples. The seed is stored with the run, so the
 * same rows can be chosen again to reproduce or compare runs; hence a seeded generator of our own
 * rather than `Math.random`.
 */

/** FNV-1a over the string's UTF-16 code units: a 32-bit seed from any string. */
const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  }
  return hash >>> 0
}

/** mulberry32: a small, fast, well-mixed 32-bit generator of numbers in [0, 1). */
const mulberry32 = (seed: number) => {
  let state = seed
  return (): number => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * `size` rows chosen uniformly by the seed (a partial Fisher–Yates shuffle of the indexes), in
 * their original relative order so that a sample reads like the dataset; every row, in order, when
 * `size` covers them all. The same rows, size and seed always give the same sample. A string seed
 * is hashed (FNV-1a) to mulberry32's 32-bit state; an integer seed (a run request's, 0 … 2^31-1)
 * is that state itself.
 */
export const sampleRows = <A>(rows: ReadonlyArray<A>, size: number, seed: string | number): ReadonlyArray<A> => {
  const wanted = Math.max(0, Math.floor(size))
  // Stryker disable next-line EqualityOperator: equivalent as `>`, a shuffle of every row sorted back is every row in order
  if (wanted >= rows.length) return [...rows]
  const random = mulberry32(typeof seed === "number" ? seed >>> 0 : fnv1a(seed))
  const indexes = rows.map((_, i) => i)
  // Stryker disable next-line EqualityOperator: equivalent as `<=`, one more swap leaves the first `wanted` indexes alone
  for (let i = 0; i < wanted; i++) {
    const j = i + Math.floor(random() * (indexes.length - i))
    ;[indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!]
  }
  return indexes.slice(0, wanted).sort((a, b) => a - b).map((i) => rows[i]!)
}

/** Numbers in [0, 1) from a seed: the same seed always gives the same sequence. */
export const seededRandom = (seed: string): () => number => mulberry32(fnv1a(seed))

/** 32 bits of a string, for ids and seeds derived from names. */
export const hash32 = (text: string): number => fnv1a(text)
