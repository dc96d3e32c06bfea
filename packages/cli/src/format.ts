import {
  type Agent,
  type Content,
  type EventOf,
  microUsdText,
  type PendingAction,
  type Session,
  type SessionEvent,
} from "@wakeloop/contracts";

/** Longest tool input or result shown inline; the full value is in `--json` output and the API. */
const INLINE_LIMIT = 200;

export function truncate(text: string, limit = INLINE_LIMIT): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** The text blocks of a content list, joined; images show as `[image]`. */
export function contentText(content: Content): string {
  return content.map((block) => (block.type === "text" ? block.text : "[image]")).join("\n");
}

/** A plain, aligned table: a header row and one row per item; empty lists say so. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "(none)";
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ");
  return [line(headers), ...rows.map(line)].join("\n");
}

export function agentTable(agents: readonly Agent[]): string {
  return table(
    ["ID", "NAME", "VERSION", "MODEL", "UPDATED"],
    agents.map((agent) => [
      agent.id,
      agent.name,
      String(agent.version),
      `${agent.model.provider}/${agent.model.id}`,
      agent.updated_at,
    ]),
  );
}

export function sessionTable(sessions: readonly Session[]): string {
  return table(
    ["ID", "STATUS", "STOP", "AGENT", "COST", "TITLE", "UPDATED"],
    sessions.map((session) => [
      session.id,
      session.status,
      session.stop_reason?.type ?? session.termination_reason ?? "-",
      `${session.agent.id}@${session.agent.version}`,
      microUsdText(session.cost_micro_usd),
      session.title ?? "-",
      session.updated_at,
    ]),
  );
}

const json = (value: unknown) => truncate(JSON.stringify(value));

/** The session's tokens so far (with the prompt cache's share) and, when the event has them, its costs. */
function usageLine(event: Extract<SessionEvent, { type: "session.usage" }>): string {
  const { usage, cost } = event;
  const cache = usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const cached =
    cache === 0
      ? ""
      : ` (+${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write)`;
  const costs =
    cost === undefined
      ? ""
      : `; cost ${microUsdText(cost.wake_micro_usd)} this wake, ${microUsdText(cost.session_micro_usd)} in all`;
  return `usage: ${usage.input_tokens} in${cached}, ${usage.output_tokens} out${costs}`;
}

/** One line saying what an event is, for people (tail, chat); `--json` prints the event itself. */
export function describeEvent(event: SessionEvent): string {
  switch (event.type) {
    case "user.message":
      return `you: ${contentText(event.content)}`;
    case "user.interrupt":
      return "you interrupted the session";
    case "user.tool_confirmation":
      return event.result === "allow"
        ? `you allowed ${event.tool_use_id}`
        : `you denied ${event.tool_use_id}${event.deny_message ? `: ${event.deny_message}` : ""}`;
    case "user.custom_tool_result":
      return `you answered ${event.custom_tool_use_id}${event.is_error ? " (error)" : ""}: ${truncate(contentText(event.content))}`;
    case "user.define_outcome":
      return `you defined the outcome: ${truncate(event.description)}`;
    case "agent.message":
      return contentText(event.content);
    case "agent.thinking":
      return "(thinking)";
    case "agent.ui_message":
      return event.text;
    case "agent.ui_blocks":
      return `[${event.title ?? "blocks"}: ${event.blocks.map((block) => block.type).join(", ")}]`;
    case "agent.tool_use":
      return `→ ${event.name} ${json(event.input)}${permissionNote(event.evaluated_permission)}`;
    case "agent.mcp_tool_use":
      return `→ ${event.mcp_server_name}/${event.name} ${json(event.input)}${permissionNote(event.evaluated_permission)}`;
    case "agent.custom_tool_use":
      return `→ ${event.name} ${json(event.input)} (custom tool: your answer is needed)`;
    case "agent.tool_result":
    case "agent.mcp_tool_result":
      return `← ${event.is_error ? "error: " : ""}${truncate(contentText(event.content))}`;
    case "session.status_running":
      return "running";
    case "session.status_idle":
      return `idle (${event.stop_reason.type})`;
    case "session.status_rescheduled":
      return "rescheduled: the wake moves to another worker";
    case "session.status_terminated":
      return `terminated (${event.reason})`;
    case "session.error":
      return `error ${event.error.type}: ${event.error.message}`;
    case "session.usage":
      return usageLine(event);
    case "session.updated":
      return `updated: ${json({ title: event.title, metadata: event.metadata, budget: event.budget })}`;
    case "session.child_created":
      return `sub-session ${event.child_session_id} created`;
    case "session.child_completed":
      return `sub-session ${event.child_session_id} ${event.status}${event.result ? `: ${truncate(event.result)}` : ""}`;
    case "session.child_requires_action":
      return `sub-session ${event.child_session_id} waits on you for ${event.event_ids.join(", ")}`;
    case "session.wake_queued":
      return `wake queued (${event.reason}) for ${event.due_at}`;
    case "session.memory_recalled":
      return `recalled ${event.hits.map((hit) => `${hit.store}/${hit.target}`).join(", ") || "no memory"}`;
    case "session.compaction":
      return compactionLine(event);
    case "mcp.tools_listed":
      return `MCP tools listed: ${event.servers
        .map((server) =>
          server.status === "ready"
            ? `${server.name} (${server.tools.length})`
            : `${server.name} unreachable`,
        )
        .join(", ")}`;
    case "sandbox.status":
      return `sandbox ${event.status}${event.message ? `: ${event.message}` : ""}`;
    case "span.model_request_start":
      return `model request to ${event.model}`;
    case "span.model_request_end":
      return `model request ended${event.is_error ? " with an error" : ""}`;
    default:
      return unknownEvent(event);
  }
}

/** A new event type fails to compile above; at run time a newer server's event still prints. */
function unknownEvent(event: never): string {
  return (event as { type: string }).type;
}

function compactionLine(event: EventOf<"session.compaction">): string {
  const { from_seq, to_seq } = event.replaces;
  const saved = `${event.tokens_before} → ${event.tokens_after} tokens`;
  if (event.summary === null)
    return `context compacted: ${event.cleared_tool_results.length} older tool results cleared (events ${from_seq}–${to_seq}; ${saved})`;
  return `context compacted: events ${from_seq}–${to_seq} summarised by ${event.model ?? "the model"} (${saved}): ${truncate(event.summary)}`;
}

function permissionNote(permission: "allow" | "ask" | "deny"): string {
  if (permission === "ask") return " (needs your approval)";
  return permission === "deny" ? " (denied by policy)" : "";
}

/** `[12] agent.message  Hello`: an event as `sessions tail` prints it. */
export function tailLine(event: SessionEvent): string {
  return `[${event.seq}] ${event.type}  ${describeEvent(event)}`;
}

/** The question asked for a pending action, with what it would run. */
export function pendingQuestion(action: PendingAction): string {
  const lines = [`${action.name} ${json(action.input)}`];
  if (action.exec) {
    if (action.exec.command !== null) lines.push(`  command: ${action.exec.command}`);
    const variables = Object.keys(action.exec.env);
    if (variables.length > 0) lines.push(`  sets: ${variables.join(", ")}`);
    lines.push(`  why asked: ${action.exec.reason}`);
  }
  return lines.join("\n");
}
