import type { ContentBlock, SessionEvent } from "@wakeloop/contracts";
import { formatTime, JsonBlock } from "../ui";

type ResultEvent = Extract<
  SessionEvent,
  { type: "agent.tool_result" | "agent.mcp_tool_result" | "user.custom_tool_result" }
>;

/** The call a result answers: tool results are shown under their call, not on their own. */
function answeredId(event: SessionEvent): string | null {
  switch (event.type) {
    case "agent.tool_result":
      return event.tool_use_id;
    case "agent.mcp_tool_result":
      return event.mcp_tool_use_id;
    case "user.custom_tool_result":
      return event.custom_tool_use_id;
    default:
      return null;
  }
}

const textOf = (content: readonly ContentBlock[]) =>
  content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");

/** The session's events; `preview` is the answer being written, shown last until it is stored. */
export function Timeline({ events, preview }: { events: SessionEvent[]; preview: string }) {
  const results = new Map<string, ResultEvent>();
  for (const event of events) {
    const id = answeredId(event);
    if (id !== null) results.set(id, event as ResultEvent);
  }
  return (
    <section aria-labelledby="timeline-heading" className="panel">
      <h2 id="timeline-heading">Timeline</h2>
      <p className="hint" aria-live="polite">
        {events.length} events, live
      </p>
      <ol className="timeline" aria-label="Session events, oldest first">
        {events
          .filter((event) => answeredId(event) === null)
          .map((event) => (
            <li
              key={event.id}
              className={`event event-${event.type.split(".")[0]}`}
              data-type={event.type}
              data-seq={event.seq}
            >
              <div className="event-head">
                <span className="seq">#{event.seq}</span> <strong>{event.type}</strong>{" "}
                <time dateTime={event.created_at}>{formatTime(event.created_at)}</time>
              </div>
              <EventBody event={event} result={results.get(event.id)} />
            </li>
          ))}
        {preview !== "" && (
          <li className="event event-agent event-live" data-type="agent.message_delta" aria-busy="true">
            <div className="event-head">
              <strong>agent.message</strong> <span className="hint">writing…</span>
            </div>
            <p className="message">{preview}</p>
          </li>
        )}
      </ol>
    </section>
  );
}

/** What a compaction did to the context later requests carry; the events it stands for stay above. */
function Compaction({ event }: { event: Extract<SessionEvent, { type: "session.compaction" }> }) {
  const { from_seq, to_seq } = event.replaces;
  const cleared = event.cleared_tool_results;
  return (
    <div className="compaction">
      <p>
        Context compacted: events #{from_seq}–#{to_seq}{" "}
        {event.summary === null
          ? "kept with older tool results cleared"
          : `summarised by ${event.model ?? "the model"}`}
        , {event.tokens_before} → {event.tokens_after} tokens.
      </p>
      {event.summary !== null && (
        <details>
          <summary>Summary</summary>
          <pre>{event.summary}</pre>
        </details>
      )}
      {cleared.length > 0 && (
        <details>
          <summary>{cleared.length} tool results cleared</summary>
          <ul>
            {cleared.map((result) => (
              <li key={result.tool_use_id}>
                <code>{result.name}</code> ({result.chars} characters, {result.tool_use_id})
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function EventBody({ event, result }: { event: SessionEvent; result: ResultEvent | undefined }) {
  switch (event.type) {
    case "user.message":
    case "agent.message":
      return <p className="message">{textOf(event.content)}</p>;
    case "agent.ui_message":
      return <p className="message">{event.text}</p>;
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
      return (
        <div className="tool-call">
          <p>
            <code>{event.name}</code>
            {"evaluated_permission" in event && <> — permission: {event.evaluated_permission}</>}
          </p>
          {"exec" in event && event.exec?.command && (
            <p>
              Command: <code>{event.exec.command}</code>
            </p>
          )}
          <JsonBlock value={event.input} label={`Input of ${event.name}`} />
          {result === undefined ? (
            <p className="hint">No result yet.</p>
          ) : (
            <div className={result.is_error ? "tool-result is-error" : "tool-result"}>
              <strong>{result.is_error ? "Error result" : "Result"}</strong> (#{result.seq})
              <pre>{textOf(result.content)}</pre>
            </div>
          )}
        </div>
      );
    case "user.tool_confirmation":
      return (
        <p>
          {event.result === "allow" ? "Allowed" : "Denied"} call {event.tool_use_id}
          {event.deny_message && `: ${event.deny_message}`}
        </p>
      );
    case "session.compaction":
      return <Compaction event={event} />;
    case "session.status_idle":
      return <p>Stopped: {event.stop_reason.type}</p>;
    case "session.status_terminated":
      return <p>Terminated: {event.reason}</p>;
    case "session.error":
      return (
        <p className="error">
          {event.error.type}: {event.error.message}
        </p>
      );
    default: {
      const { id, type, session_id, seq, created_at, processed_at, ...payload } = event as SessionEvent & {
        wake_id?: string;
        trace_id?: string;
      };
      return Object.keys(payload).length === 0 ? null : (
        <details>
          <summary>Details</summary>
          <JsonBlock value={payload} label={`Details of event ${seq}`} />
        </details>
      );
    }
  }
}
