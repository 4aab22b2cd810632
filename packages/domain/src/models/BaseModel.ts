import { Schema } from "effect"

export const Trainer = Schema.Literals(["openai", "few_shot"])
export type Trainer = typeof Trainer.Type

/** A model a fine-tune starts from, as `GET /api/base-models` lists it. */
export const BaseModel = Schema.Struct({
  /** Stable: the same trainer and model name always have the same id. */
  id: Schema.String,
  name: Schema.String,
  trainer: Trainer,
  /** `fine_tuning_api` (FINE_TUNE_BASE_URL) or `router`. */
  provider: Schema.String,
  model_name: Schema.String
})
export type BaseModel = typeof BaseModel.Type

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0")

/** FNV-1a with a chosen offset basis: four of them make 128 bits. */
const fnv = (text: string, basis: number) => {
  let hash = basis
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/**
 * A stable uuid for a name (an RFC 9562 version 8, i.e. custom, uuid): a base model keeps its id
 * across restarts and instances without being stored.
 */
export const stableUuid = (name: string): string => {
  const h = [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x85ebca6b].map((basis) => hex(fnv(name, basis))).join("")
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

export const baseModelId = (trainer: Trainer, modelName: string) => stableUuid(`${trainer}:${modelName}`)
