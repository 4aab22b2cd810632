import { Schema } from "effect"

export const Scopes = [
  "leaderboards:read",
  "leaderboards:write",
  "leaderboards:run",
  "leaderboards:inference",
  "models:read",
  "models:write",
  "models:fine-tune",
  "models:inference"
] as const

export const Scope = Schema.Literals(Scopes)
export type Scope = typeof Scope.Type

export const grants = (granted: ReadonlyArray<Scope>, required: Scope): boolean => granted.includes(required)
