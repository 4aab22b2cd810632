import { Layer } from "effect"
import { ApiTokenRepositoryPg } from "./ApiTokenRepositoryPg.ts"
import { BudgetLedgerPg } from "./BudgetLedgerPg.ts"
import { InviteRepositoryPg } from "./InviteRepositoryPg.ts"
import { PushTokenRepositoryPg } from "./PushTokenRepositoryPg.ts"
import { WebSessionRepositoryPg } from "./WebSessionRepositoryPg.ts"
import { WorkspaceRepositoryPg } from "./WorkspaceRepositoryPg.ts"

/** The access context's ports on Postgres (the budget ledger names its reservations with an IdGenerator). */
export const AccessPg = {
  layer: Layer.mergeAll(
    WorkspaceRepositoryPg.layer,
    ApiTokenRepositoryPg.layer,
    PushTokenRepositoryPg.layer,
    InviteRepositoryPg.layer,
    BudgetLedgerPg.layer,
    WebSessionRepositoryPg.layer
  )
}
