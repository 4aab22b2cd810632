import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { CasePage } from "./Case.tsx"
import { DashboardPage } from "./Dashboard.tsx"
import { HumanPage } from "./Human.tsx"
import { LeaderboardPage, LeaderboardsPage } from "./Leaderboards.tsx"
import { FineTunePage } from "./FineTune.tsx"
import { ModelPage } from "./Model.tsx"
import { ModelsPage } from "./Models.tsx"
import { RunPage } from "./Runs.tsx"
import { ServingPage } from "./Serving.tsx"
import { DatasetPage } from "./Datasets.tsx"
import { TracesPage } from "./Traces.tsx"
import { oidcSettings } from "./Oidc.ts"
import { Restoring, SignIn, signOut, useRestoredSession } from "./SignIn.tsx"
import { TokensPage } from "./Tokens.tsx"
import { WorkspaceContext } from "./ui.tsx"
import { WorkspacePage } from "./Workspace.tsx"
import { WorkspaceSwitcher } from "./WorkspaceSwitcher.tsx"

/** The route is the hash (`#/leaderboards/<id>/human`): the server serves one page for all of them. */
const routeOf = (hash: string): ReadonlyArray<string> => hash.replace(/^#\/?/, "").split("/").filter((s) => s !== "")

const useRoute = () => {
  const [route, setRoute] = useState(routeOf(location.hash))
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash))
    addEventListener("hashchange", changed)
    return () => removeEventListener("hashchange", changed)
  }, [])
  return route
}

const View = ({ route, call }: { readonly route: ReadonlyArray<string>; readonly call: Caller }) => {
  const [section, id, sub, childId] = route
  if (section === "tokens") return <TokensPage call={call} />
  if (section === "workspace") return <WorkspacePage call={call} />
  if (section === "models" && id !== undefined) {
    if (sub === "fine-tunes" && childId !== undefined) return <FineTunePage call={call} modelId={id} runId={childId} />
    if (sub === "dashboard") return <DashboardPage call={call} of={{ kind: "model", id }} />
    return <ModelPage call={call} modelId={id} dashboard />
  }
  if (section === "models") return <ModelsPage call={call} />
  if (section === "leaderboards" && id !== undefined) {
    if (sub === "human" && childId !== undefined) return <CasePage call={call} leaderboardId={id} caseId={childId} />
    if (sub === "human") return <HumanPage call={call} leaderboardId={id} />
    if (sub === "dataset") return <DatasetPage call={call} leaderboardId={id} />
    if (sub === "traces") return <TracesPage call={call} leaderboardId={id} />
    if (sub === "dashboard") return <DashboardPage call={call} of={{ kind: "leaderboard", id }} />
    if (sub === "serving") return <ServingPage call={call} leaderboardId={id} />
    if (sub === "runs" && childId !== undefined) return <RunPage call={call} leaderboardId={id} runId={childId} />
    return <LeaderboardPage call={call} leaderboardId={id} />
  }
  return <LeaderboardsPage call={call} />
}

const oidc = oidcSettings()
// An invite link (`/?invite_id=…&business_id=…`) is accepted by the first signed-in request with
// the invited address; the app then acts in the invite's workspace.
const linked = new URLSearchParams(location.search)
const invite = linked.get("invite_id")
const invitedWorkspace = invite === null ? undefined : linked.get("business_id") ?? undefined

const App = () => {
  const [call, setCall] = useState<Caller | undefined>(undefined)
  const [workspace, setWorkspace] = useState(invitedWorkspace)
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const route = useRoute()
  const expired = () => {
    setNotice("Your session has ended: sign in again to go on.")
    setCall(undefined)
  }
  // a reload keeps the reader signed in: the session lives in an HttpOnly cookie the server set
  const restoring = useRestoredSession(invite !== null, (restored) => setCall(() => restored), expired)
  if (call === undefined) {
    if (restoring) return <Restoring />
    return (
      <SignIn
        oidc={oidc}
        invite={invite}
        workspace={workspace}
        notice={notice}
        onExpired={expired}
        onSignedIn={(signedIn) => {
          // the invite's ids leave the address bar once used
          if (location.search !== "") history.replaceState(null, "", `/${location.hash}`)
          setNotice(undefined)
          setCall(() => signedIn)
        }}
      />
    )
  }
  const [section] = route
  const current = (name: string) => (section ?? "leaderboards") === name ? "page" : undefined
  return (
    <>
      <header class="top">
        <a class="brand" href="#/leaderboards">Podium</a>
        <nav aria-label="Main">
          <a href="#/leaderboards" aria-current={current("leaderboards")}>Leaderboards</a>
          <a href="#/models" aria-current={current("models")}>Models</a>
          <a href="#/tokens" aria-current={current("tokens")}>API tokens</a>
          <a href="#/workspace" aria-current={current("workspace")}>Workspace</a>
        </nav>
        <WorkspaceSwitcher
          call={call}
          workspace={workspace}
          onSwitch={(chosen) => {
            setWorkspace(chosen)
            location.hash = "#/leaderboards"
          }}
        />
        <button type="button" class="link" onClick={() => void signOut(call).then(() => setCall(undefined))}>Sign out</button>
      </header>
      <main>
        <WorkspaceContext.Provider value={workspace}>
          <View key={workspace ?? ""} route={route} call={call} />
        </WorkspaceContext.Provider>
      </main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
