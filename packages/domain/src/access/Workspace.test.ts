import { DateTime, Result } from "effect"
import { describe, expect, it } from "vitest"
import { UserId } from "../shared/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import { Membership, requireAdministrator, selectMembership } from "./Workspace.ts"

const user = UserId.make("0190a000-0000-7000-8000-00000000000a")
const personal = WorkspaceId.make("0190a000-0000-7000-8000-000000000001")
const team = WorkspaceId.make("0190a000-0000-7000-8000-000000000002")
const elsewhere = WorkspaceId.make("0190a000-0000-7000-8000-000000000003")
const joined_at = DateTime.makeUnsafe("2026-11-21T10:00:00.000Z")
const memberships = [
  new Membership({ workspace_id: team, user_id: user, role: "member", personal: false, joined_at }),
  new Membership({ workspace_id: personal, user_id: user, role: "owner", personal: true, joined_at })
]

describe("choosing the workspace", () => {
  it("defaults to the personal workspace, follows business_id, refuses others", () => {
    expect(Result.getOrThrow(selectMembership(memberships, undefined)).workspace_id).toBe(personal)
    expect(Result.getOrThrow(selectMembership(memberships, team)).workspace_id).toBe(team)
    expect(Result.isFailure(selectMembership(memberships, elsewhere))).toBe(true)
    expect(Result.isFailure(selectMembership([], undefined))).toBe(true)
  })

  it("only owners and admins administer", () => {
    expect(Result.isSuccess(requireAdministrator(memberships[1]!))).toBe(true)
    expect(Result.isFailure(requireAdministrator(memberships[0]!))).toBe(true)
  })
})
