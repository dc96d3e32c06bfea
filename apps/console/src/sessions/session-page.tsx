import { microUsdText } from "@wakeloop/sdk";
import { type FormEvent, useState } from "react";
import type { Client } from "../api";
import { ErrorNote, formatTime, Link, useAction, useLoad } from "../ui";
import { PendingActions } from "./pending-actions";
import { StatusBadge } from "./status-badge";
import { SubSessionTree } from "./sub-session-tree";
import { Timeline } from "./timeline";
import { ToolSetView } from "./tool-set-view";
import { TraceWaterfall } from "./trace-waterfall";
import { useEventStream } from "./use-event-stream";

export function SessionPage({ client, id }: { client: Client; id: string }) {
  const stream = useEventStream(client, id);
  // The session, its pending actions and its trace change with its status events: reloaded on each.
  const statusSeq = stream.events.findLast((event) => event.type.startsWith("session."))?.seq ?? 0;
  const session = useLoad(() => client.sessions.get(id), [client, id, statusSeq]);
  const pending = useLoad(() => client.sessions.pending(id), [client, id, statusSeq]);
  const actions = useAction();
  const s = session.data;

  return (
    <>
      <h1>{s?.title ?? `Session ${id}`}</h1>
      <ErrorNote error={session.error ?? stream.error ?? actions.error} />
      {s && (
        <section aria-labelledby="session-facts" className="panel">
          <h2 id="session-facts" className="visually-hidden">
            Session facts
          </h2>
          <dl className="facts">
            <dt>Status</dt>
            <dd aria-live="polite" data-testid="session-status">
              <StatusBadge session={s} />
            </dd>
            <dt>Agent</dt>
            <dd>
              <Link to={{ page: "agent", id: s.agent.id }}>{s.agent.id}</Link> v{s.agent.version}
            </dd>
            <dt>Environment</dt>
            <dd>
              {s.environment_id ? (
                <Link to={{ page: "environment", id: s.environment_id }}>{s.environment_id}</Link>
              ) : (
                "none"
              )}
            </dd>
            {s.parent_session_id && (
              <>
                <dt>Parent</dt>
                <dd>
                  <Link to={{ page: "session", id: s.parent_session_id }}>{s.parent_session_id}</Link>
                </dd>
              </>
            )}
            <dt>Tokens</dt>
            <dd>
              {s.usage.input_tokens} in / {s.usage.output_tokens} out
              {s.budget.max_total_tokens !== null && ` (budget ${s.budget.max_total_tokens})`}
              {s.usage.cache_read_input_tokens + s.usage.cache_creation_input_tokens > 0 &&
                ` — ${s.usage.cache_read_input_tokens} read from the prompt cache, ${s.usage.cache_creation_input_tokens} written to it`}
            </dd>
            <dt>Cost</dt>
            <dd>
              {microUsdText(s.cost_micro_usd)}
              {s.budget.max_cost_micro_usd != null &&
                ` (budget ${microUsdText(s.budget.max_cost_micro_usd)})`}
            </dd>
            <dt>Created</dt>
            <dd>{formatTime(s.created_at)}</dd>
          </dl>
          <div className="buttons">
            <button
              type="button"
              disabled={actions.busy || s.status === "terminated"}
              onClick={() => void actions.run(() => client.events.send(id, [{ type: "user.interrupt" }]))}
            >
              Interrupt
            </button>
            <button
              type="button"
              className="danger"
              disabled={actions.busy || s.status === "terminated"}
              onClick={() => {
                if (window.confirm("Archive this session? It stops for good.")) {
                  void actions.run(() => client.sessions.archive(id).then(session.reload));
                }
              }}
            >
              Archive
            </button>
          </div>
        </section>
      )}
      {pending.data && pending.data.data.length > 0 && (
        <PendingActions
          client={client}
          sessionId={id}
          actions={pending.data.data}
          onAnswered={pending.reload}
        />
      )}
      {s && s.status !== "terminated" && <Composer client={client} sessionId={id} />}
      <Timeline events={stream.events} preview={stream.preview} />
      <SubSessionTree client={client} parentId={id} />
      <TraceWaterfall client={client} sessionId={id} refreshKey={statusSeq} />
      <ToolSetView client={client} sessionId={id} refreshKey={statusSeq} />
    </>
  );
}

function Composer({ client, sessionId }: { client: Client; sessionId: string }) {
  const [text, setText] = useState("");
  const { busy, error, run } = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await client.events.send(sessionId, [{ type: "user.message", content: [{ type: "text", text }] }]);
      setText("");
    });
  };
  return (
    <form onSubmit={submit} aria-label="Send a message" className="panel stack">
      <label htmlFor="message">Message</label>
      <textarea
        id="message"
        required
        rows={3}
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
      <button type="submit" disabled={busy}>
        Send
      </button>
      <ErrorNote error={error} />
    </form>
  );
}
