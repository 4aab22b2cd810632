import type { WorkspaceView } from "@podium/adapters-http/access/WorkspacesApi"
import type { WorkspaceId } from "@podium/domain/shared"
import { useId } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { useLoad } from "./ui.tsx"

/** Every workspace the signed-in user belongs to, following the cursor (pages of 100). */
const allWorkspaces = async (call: Caller): Promise<ReadonlyArray<WorkspaceView>> => {
  const all: Array<WorkspaceView> = []
  let cursor: WorkspaceId | undefined
  do {
    const page = await call((c) => c.workspaces.list({ query: { limit: 100, ...(cursor === undefined ? {} : { cursor }) } }))
    all.push(...page.data)
    cursor = page.next_cursor ?? undefined
  } while (cursor !== undefined)
  return all
}

const roleLabels: Record<WorkspaceView["role"], string> = { owner: "owner", admin: "admin", member: "member" }

/**
 * The header's choice of the workspace the app acts in, over the user's workspaces
 * (`GET /api/workspaces`): a member of several moves between them without an invite link. The
 * personal workspace is `undefined` (requests then leave `business_id` out and the server picks it);
 * with one workspace only there is nothing to choose and nothing is shown.
 */
export const WorkspaceSwitcher = ({ call, workspace, onSwitch }: {
  readonly call: Caller
  /** The workspace acted in: an id, or undefined for the personal one. */
  readonly workspace: string | undefined
  readonly onSwitch: (workspace: string | undefined) => void
}) => {
  const id = useId()
  const list = useLoad(() => allWorkspaces(call), [call])
  const workspaces = list.value ?? []
  const personal = workspaces.find((w) => w.personal)
  // an invite link's workspace may not be listed yet (its invite not accepted): it stays a choice
  const unlisted = workspace !== undefined && !workspaces.some((w) => w.business_id === workspace)
  if (list.value === undefined || workspaces.length + (unlisted ? 1 : 0) < 2) return null
  const current = workspace ?? personal?.business_id ?? ""
  return (
    <span class="switcher">
      <label for={id}>Workspace</label>
      <select
        id={id}
        value={current}
        onChange={(e) => {
          const chosen = e.currentTarget.value
          onSwitch(chosen === personal?.business_id ? undefined : chosen)
        }}
      >
        {workspaces.map((w) => (
          <option key={w.business_id} value={w.business_id}>
            {w.name} ({w.personal ? "yours" : roleLabels[w.role]})
          </option>
        ))}
        {unlisted ? <option value={workspace}>Invited workspace</option> : null}
      </select>
    </span>
  )
}
