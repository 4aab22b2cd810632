import { DateTime, Effect, Layer } from "effect"
import { Membership, Principal, User } from "../access/index.ts"
import { IdGenerator, SecretCipher, type UserId, type WorkspaceId } from "../shared/index.ts"

/**
 * Small fakes for use-case tests on memory layers, for ports that have no memory adapter of their
 * own: predictable ids, a cipher that only seals, and signed-in workspace owners.
 */

/** The `n`th of a run of valid UUIDs. */
export const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** Ids in order, from `uuid(1000)`. */
export const IdGeneratorInOrder = {
  layer: Layer.effect(
    IdGenerator,
    Effect.sync(() => {
      let n = 1000
      return IdGenerator.of({
        next: Effect.sync(() => uuid(n++)),
        nextMany: (count) => Effect.sync(() => Array.from({ length: count }, () => uuid(n++)))
      })
    })
  )
}

/** Seals anything to "sealed"; opening is not part of these tests. */
export const SecretCipherSealing = {
  layer: Layer.succeed(SecretCipher, { seal: () => Effect.succeed("sealed"), open: () => Effect.die("not used") })
}

/** A signed-in user `n` who owns their personal workspace `uuid(n)`. */
export const workspaceOwner = (n: number) => {
  const workspace = uuid(n) as WorkspaceId
  const user = uuid(n + 100) as UserId
  return Principal.SessionPrincipal({
    user: new User({ id: user, subject: `user-${n}`, email: null }),
    memberships: [new Membership({ workspace_id: workspace, user_id: user, role: "owner", personal: true, joined_at: DateTime.makeUnsafe(0) })],
    emailVerified: false
  })
}
