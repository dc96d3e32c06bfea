import type { PendingAction, SessionEvent, StreamDelta, UserEventInput } from "@wakeloop/contracts";
import type { WakeloopClient } from "@wakeloop/sdk";
import { CliError, ExitCode } from "./errors";
import { describeEvent, pendingQuestion } from "./format";
import { LiveAnswer } from "./live-answer";
import { resolveAgent } from "./resolve-agent";
import { type Io, LineReader, noteReconnect, Progress, writeLine } from "./terminal";

export interface ChatOptions {
  /** An agent id or name; a new session is started with it. */
  agent?: string;
  /** Continue this session instead of starting one. */
  session?: string;
  /** Messages to send in order, one turn each, instead of reading them; the chat ends after them. */
  messages: string[];
  title?: string;
  json: boolean;
}

/** Events a person in a chat does not need to see: their own input echoed, and bookkeeping. */
const QUIET: ReadonlySet<SessionEvent["type"]> = new Set([
  "user.message",
  "user.tool_confirmation",
  "user.custom_tool_result",
  "session.status_running",
  "session.status_idle",
  "session.usage",
  "session.wake_queued",
  "span.model_request_start",
  "span.model_request_end",
]);

const HELP = "Type a message and press Enter; /exit or Ctrl-D leaves, Ctrl-C interrupts a running turn.";

/**
 * An interactive session: each line typed is a user.message, the session's events stream back as they
 * are committed, and a pause for an approval or a custom tool result is answered inline. One event
 * stream serves the whole chat, so nothing is missed between turns.
 */
export async function runChat(client: WakeloopClient, options: ChatOptions, io: Io): Promise<void> {
  const session = await openSession(client, options);
  const note = (text: string) => writeLine(io.stderr, text);
  note(`session ${session.id}. ${options.messages.length === 0 ? HELP : ""}`.trimEnd());

  const stop = new AbortController();
  let turnRunning = false;
  let answering = false;
  // Ctrl-C while the agent works interrupts the turn; at a question or the prompt it leaves (the
  // session keeps waiting for its answer).
  const reader = new LineReader(io, () => {
    if (!turnRunning || answering) {
      stop.abort();
      reader.close();
      return;
    }
    note("interrupting…");
    client.events.send(session.id, [{ type: "user.interrupt" }]).catch((error: unknown) => {
      note(`could not interrupt: ${(error as Error).message}`);
    });
  });
  const progress = new Progress(io);
  // A person sees the answer as it is written; `--json` prints the stored events only.
  const events = client.events
    .stream(session.id, {
      afterSeq: session.last_seq,
      signal: stop.signal,
      onReconnect: noteReconnect(io),
      deltas: !options.json,
    })
    [Symbol.asyncIterator]();
  const live = new LiveAnswer(io.stdout);

  const show = (item: SessionEvent | StreamDelta) => {
    // Deltas are all the live answer's; narrowing needs the second test.
    if (live.take(item) || "ephemeral" in item) return;
    if (options.json) writeLine(io.stdout, JSON.stringify(item));
    else if (!QUIET.has(item.type)) writeLine(io.stdout, describeEvent(item));
  };

  const answerAll = async (eventIds: readonly string[]) => {
    answering = true;
    try {
      await answer(client, session.id, eventIds, reader, io);
    } finally {
      answering = false;
    }
  };

  /**
   * Streams one turn to its end, answering pauses (first those in `waitingOn`, when a continued session
   * was already waiting); false when the session is over.
   */
  const runTurn = async (waitingOn: readonly string[] = []): Promise<boolean> => {
    turnRunning = true;
    try {
      if (waitingOn.length > 0) await answerAll(waitingOn);
      for (;;) {
        // The spinner would wipe an answer half written on its line.
        if (!live.writing) progress.start("waiting for the agent…");
        const next = await events.next();
        progress.stop();
        if (next.done) return false;
        const event = next.value;
        show(event);
        if ("ephemeral" in event) continue;
        if (event.type === "session.status_terminated") return false;
        if (event.type !== "session.status_idle") continue;
        const reason = event.stop_reason;
        if (reason.type === "requires_action") {
          await answerAll(reason.event_ids);
          continue;
        }
        if (reason.type !== "end_turn") note(`the turn stopped: ${reason.type}`);
        return true;
      }
    } finally {
      turnRunning = false;
    }
  };

  // A continued session may be ended, mid-turn, or waiting on you: that comes before a new message.
  let open = session.status !== "terminated";
  try {
    if (open && session.stop_reason?.type === "requires_action") {
      open = await runTurn(session.stop_reason.event_ids);
    } else if (session.status === "running" || session.status === "rescheduling") {
      open = await runTurn();
    }
    const scripted = [...options.messages];
    while (open) {
      const text = options.messages.length > 0 ? (scripted.shift() ?? null) : await reader.ask("you> ");
      if (text === null || text.trim() === "/exit") break;
      if (text.trim() === "") continue;
      await client.events.send(session.id, [{ type: "user.message", content: [{ type: "text", text }] }]);
      open = await runTurn();
    }
  } finally {
    progress.stop();
    stop.abort();
    reader.close();
    await events.return?.(undefined);
  }
  note(open ? `continue with: wakeloop chat --session ${session.id}` : "the session has ended");
}

async function openSession(client: WakeloopClient, options: ChatOptions) {
  if (options.session !== undefined) {
    if (options.agent !== undefined) {
      throw new CliError("give an agent or --session, not both", ExitCode.usage);
    }
    return client.sessions.get(options.session);
  }
  if (options.agent === undefined) {
    throw new CliError("give the agent to chat with, or --session to continue one", ExitCode.usage);
  }
  const agent = await resolveAgent(client, options.agent);
  return client.sessions.create({
    agent: agent.id,
    ...(options.title !== undefined && { title: options.title }),
  });
}

const ALLOW = new Set(["y", "yes", "allow"]);
const DENY = new Set(["n", "no", "deny"]);

/** Asks for every action the session waits on and sends the answers together. */
async function answer(
  client: WakeloopClient,
  sessionId: string,
  eventIds: readonly string[],
  reader: LineReader,
  io: Io,
): Promise<void> {
  const pending = (await client.sessions.pending(sessionId)).data.filter((action) =>
    eventIds.includes(action.event_id),
  );
  const answers: UserEventInput[] = [];
  for (const action of pending) answers.push(await ask(action, reader, io, sessionId));
  if (answers.length > 0) await client.events.send(sessionId, answers);
}

async function ask(
  action: PendingAction,
  reader: LineReader,
  io: Io,
  sessionId: string,
): Promise<UserEventInput> {
  const required = async (prompt: string) => {
    const line = await reader.ask(prompt);
    if (line === null) {
      throw new CliError(
        `input ended while the session waits for an answer; answer later with: wakeloop chat --session ${sessionId}`,
        ExitCode.usage,
      );
    }
    return line.trim();
  };
  writeLine(io.stderr, `? ${pendingQuestion(action)}`);
  if (action.kind === "custom_tool_result") {
    const text = await required(`result of ${action.name} (start with ! to report an error)> `);
    const isError = text.startsWith("!");
    return {
      type: "user.custom_tool_result",
      custom_tool_use_id: action.event_id,
      content: [{ type: "text", text: isError ? text.slice(1).trim() : text }],
      ...(isError && { is_error: true }),
    };
  }
  for (;;) {
    const verdict = (await required(`allow ${action.name}? [y/n]> `)).toLowerCase();
    if (ALLOW.has(verdict))
      return { type: "user.tool_confirmation", tool_use_id: action.event_id, result: "allow" };
    if (DENY.has(verdict)) {
      const message = await required("why (sent to the agent; Enter for no reason)> ");
      return {
        type: "user.tool_confirmation",
        tool_use_id: action.event_id,
        result: "deny",
        ...(message !== "" && { deny_message: message }),
      };
    }
    writeLine(io.stderr, "answer y (allow) or n (deny)");
  }
}
