import type { Session, SessionStatus } from "@wakeloop/contracts";
import { microUsdText } from "@wakeloop/sdk";
import { type FormEvent, useState } from "react";
import type { Client } from "../api";
import { columns, DataTable } from "../data-table";
import { NamedSelect } from "../named-select";
import { navigate } from "../router";
import { ErrorNote, formatTime, Link, useAction, useLoad } from "../ui";
import { StatusBadge } from "./status-badge";

const STATUSES: SessionStatus[] = ["idle", "running", "rescheduling", "terminated"];

interface Filters {
  status: SessionStatus | "";
  agentId: string;
  parentId: string;
  /** Idle with a requires_action stop: a tool confirmation or custom tool result is awaited. */
  waitingOnApproval: boolean;
}

const waiting = (session: Session) => session.stop_reason?.type === "requires_action";

export function SessionList({ client }: { client: Client }) {
  const [filters, setFilters] = useState<Filters>({
    status: "",
    agentId: "",
    parentId: "",
    waitingOnApproval: false,
  });
  const [pages, setPages] = useState<string[]>([]);
  const agents = useLoad(() => client.agents.list({ limit: 200 }), [client]);
  const list = useLoad(async () => {
    const query = {
      // Waiting on approval is a kind of idle: the API filters by status, this page by stop reason.
      ...(filters.waitingOnApproval
        ? { status: "idle" as const }
        : filters.status && { status: filters.status }),
      ...(filters.agentId && { agent_id: filters.agentId }),
      ...(filters.parentId.trim() && { parent_session_id: filters.parentId.trim() }),
      limit: 50,
    };
    const sessions: Session[] = [];
    let next: string | null = null;
    for (const afterId of [undefined, ...pages]) {
      const page = await client.sessions.list({ ...query, ...(afterId && { after_id: afterId }) });
      sessions.push(...page.data);
      next = page.next_after_id;
    }
    return { sessions: filters.waitingOnApproval ? sessions.filter(waiting) : sessions, next };
  }, [client, filters, pages]);
  const set = (change: Partial<Filters>) => {
    setPages([]);
    setFilters({ ...filters, ...change });
  };

  return (
    <>
      <h1>Sessions</h1>
      <NewSession client={client} agents={agents.data?.data ?? []} />
      <form className="filters" aria-label="Filter sessions" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select
            value={filters.status}
            disabled={filters.waitingOnApproval}
            onChange={(event) => set({ status: event.target.value as Filters["status"] })}
          >
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status}>{status}</option>
            ))}
          </select>
        </label>
        <NamedSelect
          label="Agent"
          items={agents.data?.data ?? []}
          value={filters.agentId}
          onChange={(agentId) => set({ agentId })}
          noneLabel="any"
        />
        <label>
          Parent session id
          <input value={filters.parentId} onChange={(event) => set({ parentId: event.target.value })} />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={filters.waitingOnApproval}
            onChange={(event) => set({ waitingOnApproval: event.target.checked })}
          />
          Waiting on approval
        </label>
        <button type="button" className="secondary" onClick={list.reload}>
          Refresh
        </button>
      </form>
      <ErrorNote error={list.error ?? agents.error} />
      <DataTable
        caption="Sessions, newest first"
        columns={columns("Session", "Status", "Agent", "Parent", "Tokens", "Cost", "Created")}
        loading={list.loading}
      >
        {list.data?.sessions.map((session) => (
          <tr key={session.id}>
            <td>
              <Link to={{ page: "session", id: session.id }}>{session.title ?? session.id}</Link>
            </td>
            <td>
              <StatusBadge session={session} />
            </td>
            <td>
              <Link to={{ page: "agent", id: session.agent.id }}>
                {agents.data?.data.find((agent) => agent.id === session.agent.id)?.name ?? session.agent.id}
              </Link>{" "}
              v{session.agent.version}
            </td>
            <td>
              {session.parent_session_id && (
                <Link to={{ page: "session", id: session.parent_session_id }}>
                  {session.parent_session_id}
                </Link>
              )}
            </td>
            <td>{session.usage.input_tokens + session.usage.output_tokens}</td>
            <td>{microUsdText(session.cost_micro_usd)}</td>
            <td>{formatTime(session.created_at)}</td>
          </tr>
        ))}
      </DataTable>
      {list.data?.sessions.length === 0 && <p>No sessions match.</p>}
      {list.data?.next && (
        <button
          type="button"
          className="secondary"
          onClick={() => setPages([...pages, list.data?.next ?? ""])}
        >
          Load more
        </button>
      )}
    </>
  );
}

function NewSession({ client, agents }: { client: Client; agents: { id: string; name: string }[] }) {
  const [agentId, setAgentId] = useState("");
  const [environmentId, setEnvironmentId] = useState("");
  const [title, setTitle] = useState("");
  const environments = useLoad(() => client.environments.list({ limit: 200 }), [client]);
  const { busy, error, run } = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const session = await client.sessions.create({
        agent: agentId,
        ...(environmentId && { environment_id: environmentId }),
        ...(title.trim() && { title: title.trim() }),
      });
      navigate({ page: "session", id: session.id });
    });
  };
  return (
    <details className="panel">
      <summary>Start a session</summary>
      <form onSubmit={submit} aria-label="Start a session" className="stack">
        <NamedSelect
          label="Agent"
          items={agents}
          value={agentId}
          onChange={setAgentId}
          noneLabel="choose an agent"
          required
        />
        <NamedSelect
          label="Environment (sandbox)"
          items={environments.data?.data ?? []}
          value={environmentId}
          onChange={setEnvironmentId}
          noneLabel="none"
        />
        <label>
          Title
          <input value={title} onChange={(event) => setTitle(event.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Start session
        </button>
        <ErrorNote error={error ?? environments.error} />
      </form>
    </details>
  );
}
