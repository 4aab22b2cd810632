import type { Benchmark } from "./Benchmark.ts"

export const HealthBench: Benchmark = {
  name: "health",
  description: "GET /healthz: routing, one SELECT 1, JSON encoding",
  scenarios: async () => [{ name: "GET /healthz", target: { method: "GET", path: "/healthz" } }]
}
