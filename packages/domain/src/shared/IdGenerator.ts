import { Context, type Effect } from "effect"

/** Server-generated ids: UUIDv7, so they sort by creation time. */
export class IdGenerator extends Context.Service<IdGenerator, {
  readonly next: Effect.Effect<string>
  /** `count` ids at once, in order: one effect for a batch (a push of 10,000 rows). */
  readonly nextMany: (count: number) => Effect.Effect<ReadonlyArray<string>>
}>()("@podium/domain/shared/IdGenerator") {}
