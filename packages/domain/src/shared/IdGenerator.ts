import { Context, type Effect } from "effect"

/** Server-generated ids: UUIDv7, so they sort by creation time. */
export class IdGenerator extends Context.Service<IdGenerator, {
  readonly next: Effect.Effect<string>
}>()("@podium/domain/shared/IdGenerator") {}
