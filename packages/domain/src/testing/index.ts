import { DateTime, Effect, Layer } from "effect"
import { Membership, Principal, User } from "../access/index.ts"
import { ChatProviderFailed, ServiceModels } from "../inference/index.ts"
import { ModelDirectory } from "../leaderboards/index.ts"
import { IdGenerator, SecretCipher, UserId, WorkspaceId } from "../shared/index.ts"

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
      return IdGenerator.fromUuids({
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

/** For use cases whose tests name no Service candidate: no workspace has a model. */
export const ModelDirectoryEmpty = {
  layer: Layer.succeed(ModelDirectory, ModelDirectory.of({ exists: () => Effect.succeed(false) }))
}

/** No model is served: a Service candidate fails as one naming a model that does not exist. */
const modelNotFound = (modelId: string) =>
  Effect.fail(new ChatProviderFailed({
    candidate_id: modelId,
    candidate_name: modelId,
    reason: "model not found",
    upstream_status: 404,
    latency_ms: 0
  }))

export const ServiceModelsEmpty = {
  layer: Layer.succeed(ServiceModels, ServiceModels.of({
    complete: (_, modelId) => modelNotFound(modelId),
    stream: (_, modelId) => modelNotFound(modelId)
  }))
}

/** A signed-in user `n` who owns their personal workspace `uuid(n)`. */
export const workspaceOwner = (n: number) => {
  const workspace = WorkspaceId.make(uuid(n))
  const user = UserId.make(uuid(n + 100))
  return Principal.SessionPrincipal({
    user: new User({ id: user, subject: `user-${n}`, email: null }),
    memberships: [new Membership({ workspace_id: workspace, user_id: user, role: "owner", personal: true, joined_at: DateTime.makeUnsafe(0) })],
    emailVerified: false
  })
}
