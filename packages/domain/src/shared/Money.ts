/** Costs are counted in pico-dollars (1e-12 USD) when summed: finer than any per-token price. */
const picoPerUsd = 1e12

const pico = (usd: number): bigint => BigInt(Math.round(usd * picoPerUsd))

/**
 * The exact sum of costs in USD: each cost taken as a whole number of pico-dollars and added as
 * integers, then made a float once (floats added one by one drift: 0.01 + 0.02 + 0.02 is
 * 0.05000000000000001, this is 0.05).
 */
export const sumUsd = (costs: Iterable<number>): number => {
  let total = 0n
  for (const cost of costs) total += pico(cost)
  return Number(total) / picoPerUsd
}

/** Two costs added exactly (see `sumUsd`), for running totals. */
export const addUsd = (a: number, b: number): number => sumUsd([a, b])
