import type { PendingAction } from "@wakeloop/contracts";
import { useState } from "react";
import type { Client } from "../api";
import { ErrorNote, JsonBlock, useAction } from "../ui";

/**
 * What the paused session waits for (`requires_action`): each call with its tool input and, for
 * commands the exec policy asked about, the exact command and environment being allowed.
 */
export function PendingActions({
  client,
  sessionId,
  actions,
  onAnswered,
}: {
  client: Client;
  sessionId: string;
  actions: PendingAction[];
  onAnswered: () => void;
}) {
  return (
    <section aria-labelledby="pending-heading" className="panel attention">
      <h2 id="pending-heading">Waiting on you ({actions.length})</h2>
      <ul className="plain">
        {actions.map((action) => (
          <li key={action.event_id}>
            {action.kind === "tool_confirmation" ? (
              <Confirmation client={client} sessionId={sessionId} action={action} onAnswered={onAnswered} />
            ) : (
              <CustomResult client={client} sessionId={sessionId} action={action} onAnswered={onAnswered} />
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

interface ActionProps {
  client: Client;
  sessionId: string;
  action: PendingAction;
  onAnswered: () => void;
}

function CallDetails({ action }: { action: PendingAction }) {
  return (
    <>
      {action.exec && (
        <dl className="facts">
          <dt>Command</dt>
          <dd>
            <code>{action.exec.command ?? "(none)"}</code>
          </dd>
          <dt>Environment</dt>
          <dd>
            {Object.keys(action.exec.env).length === 0 ? (
              "(no variables)"
            ) : (
              <JsonBlock value={action.exec.env} label="Environment variables" />
            )}
          </dd>
          <dt>Why asked</dt>
          <dd>{action.exec.reason}</dd>
        </dl>
      )}
      <JsonBlock value={action.input} label={`Input of ${action.name}`} />
    </>
  );
}

function Confirmation({ client, sessionId, action, onAnswered }: ActionProps) {
  const [message, setMessage] = useState("");
  const { busy, error, run } = useAction();
  const answer = (result: "allow" | "deny") =>
    void run(async () => {
      await client.events.send(sessionId, [
        {
          type: "user.tool_confirmation",
          tool_use_id: action.event_id,
          result,
          ...(result === "deny" && message.trim() && { deny_message: message.trim() }),
        },
      ]);
      onAnswered();
    });
  const messageId = `deny-${action.event_id}`;
  return (
    <article aria-label={`Approve ${action.name}`} className="stack">
      <h3>
        Approve tool <code>{action.name}</code>?
      </h3>
      <CallDetails action={action} />
      <label htmlFor={messageId}>Message to the agent if denied</label>
      <input id={messageId} value={message} onChange={(event) => setMessage(event.target.value)} />
      <div className="buttons">
        <button type="button" disabled={busy} onClick={() => answer("allow")}>
          Allow
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => answer("deny")}>
          Deny
        </button>
      </div>
      <ErrorNote error={error} />
    </article>
  );
}

function CustomResult({ client, sessionId, action, onAnswered }: ActionProps) {
  const [text, setText] = useState("");
  const [isError, setIsError] = useState(false);
  const { busy, error, run } = useAction();
  const submit = () =>
    void run(async () => {
      await client.events.send(sessionId, [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: action.event_id,
          content: [{ type: "text", text }],
          is_error: isError,
        },
      ]);
      onAnswered();
    });
  const resultId = `result-${action.event_id}`;
  return (
    <article aria-label={`Answer ${action.name}`} className="stack">
      <h3>
        Custom tool <code>{action.name}</code> needs a result
      </h3>
      <CallDetails action={action} />
      <label htmlFor={resultId}>Result</label>
      <textarea id={resultId} rows={3} value={text} onChange={(event) => setText(event.target.value)} />
      <label className="check">
        <input type="checkbox" checked={isError} onChange={(event) => setIsError(event.target.checked)} />
        Report as an error
      </label>
      <button type="button" disabled={busy} onClick={submit}>
        Send result
      </button>
      <ErrorNote error={error} />
    </article>
  );
}
