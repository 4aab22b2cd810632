/** The page a list endpoint's `limit` and `offset` ask for (defaults 100 and 0). */
export const page = (query: { readonly limit?: number | undefined; readonly offset?: number | undefined }) => ({
  limit: query.limit ?? 100,
  offset: query.offset ?? 0
})

/** One more than asked is read, to know whether there is a next page. */
export const onePage = <A>(found: ReadonlyArray<A>, asked: { readonly limit: number; readonly offset: number }) => ({
  items: found.slice(0, asked.limit),
  next_offset: found.length > asked.limit ? asked.offset + asked.limit : null
})
