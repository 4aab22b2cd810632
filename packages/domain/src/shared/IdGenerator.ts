import { Context, Effect, type Schema } from "effect"

/**
 * A kind of id: the schema of a branded UUID (`RunId`, `LeaderboardId`), whose `make` gives a fresh
 * UUID its brand.
 */
export interface IdKind<A> {
  readonly make: (uuid: string, options?: Schema.MakeOptions) => A
}

/** Fresh UUIDs, the whole of what a generator's adapter provides. */
export interface UuidSource {
  readonly next: Effect.Effect<string>
  /** `count` UUIDs at once, in order: one effect for a batch (a push of 10,000 rows). */
  readonly nextMany: (count: number) => Effect.Effect<ReadonlyArray<string>>
}

/**
 * Server-generated ids: UUIDv7, so they sort by creation time. Each is made as its kind:
 * `yield* ids.make(RunId)` is a `RunId`, so no id is cast to its type where it is made.
 */
export class IdGenerator extends Context.Service<IdGenerator, {
  /** A fresh id of the kind given. */
  readonly make: <A>(kind: IdKind<A>) => Effect.Effect<A>
  /** `count` fresh ids of the kind given, in order. */
  readonly makeMany: <A>(kind: IdKind<A>, count: number) => Effect.Effect<ReadonlyArray<A>>
}>()("@podium/domain/shared/IdGenerator") {
  /**
   * The generator of a source of UUIDs. The source vouches that they are UUIDs (its tests say so),
   * so each is branded as its kind without its UUID check again: a batch of 10,000 costs no more.
   */
  static readonly fromUuids = (source: UuidSource): IdGenerator["Service"] =>
    IdGenerator.of({
      make: (kind) => Effect.map(source.next, (uuid) => kind.make(uuid, unchecked)),
      makeMany: (kind, count) => Effect.map(source.nextMany(count), (uuids) => uuids.map((uuid) => kind.make(uuid, unchecked)))
    })
}

const unchecked: Schema.MakeOptions = { disableChecks: true }
