import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";
import { createClient, LivePreview } from "@wakeloop/sdk";
import { defaultRunMode, entryArgs, Platform, TmuxTerminal } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Live token streaming (issue #29 item 4): the model's text and tool arguments reach an SSE client
// while the fake model is still streaming them, in each provider's real wire format; the stored events
// stay the answer (no delta is stored, a reconnect resumes on stored events without a gap), and the
// CLI chat prints the answer as it is written.

const ROOT = join(import.meta.dirname, "..", "..");
let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    workerEnv: { MODEL_RETRY_BASE_MS: "20", MODEL_RETRY_MAX_MS: "50" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const say = (text: string) => ({ type: "user.message" as const, content: [{ type: "text" as const, text }] });
const textOf = (event: SessionEvent | undefined) =>
  event?.type === "agent.message"
    ? event.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";
/** The fake model's clock (same process): epoch milliseconds with sub-millisecond precision. */
const now = () => performance.timeOrigin + performance.now();

interface Received {
  item: SessionEvent | StreamDelta;
  at: number;
}

/** Reads the stream (with deltas) until the session is idle after `afterSeq`. */
async function readTurn(
  stream: AsyncGenerator<SessionEvent | StreamDelta>,
  afterSeq: number,
): Promise<Received[]> {
  const received: Received[] = [];
  for await (const item of stream) {
    received.push({ item, at: now() });
    if (item.type === "session.status_idle" && item.seq > afterSeq) break;
  }
  return received;
}

describe.each(["anthropic", "openai_compatible"] as const)("live deltas from %s", (provider) => {
  const client = () => createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
  const ANSWER = "Streaming makes the answer visible while the model is still writing it.";
  const STATE = { key: "mood", value: "curious" };

  it("reach the SSE client before the stored answer, add up to it, and are never stored", async () => {
    const agent = await platform.createAgent({
      model: platform.fakeModel(provider),
      tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_allow" }] }],
    });
    const session = await client().sessions.create({ agent });
    platform.fake.enqueue(
      { text: "Noting it.", toolCalls: [{ name: "set_state", input: STATE }], chunkDelayMs: 30 },
      { text: ANSWER, chunkDelayMs: 30 },
    );
    const stop = new AbortController();
    const stream = client().events.stream(session.id, { signal: stop.signal, deltas: true });
    const [posted] = (await client().events.send(session.id, [say("stream it")])).events;
    const received = await readTurn(stream, posted?.seq ?? 0);
    stop.abort();

    const items = received.map((entry) => entry.item);
    const stored = items.filter((item): item is SessionEvent => !("ephemeral" in item));
    const deltas = items.filter((item): item is StreamDelta => "ephemeral" in item);
    const starts = stored.filter((event) => event.type === "span.model_request_start");
    const messages = stored.filter((event) => event.type === "agent.message");
    expect(starts).toHaveLength(2);
    expect(messages.map(textOf)).toEqual(["Noting it.", ANSWER]);

    for (const [index, start] of starts.entries()) {
      const own = deltas.filter((delta) => delta.model_request_start_id === start.id);
      const text = own.flatMap((delta) => (delta.type === "agent.message_delta" ? [delta.text] : []));
      // The words came 30 ms apart: the client saw the answer in several pieces, which add up to it.
      expect(text.length).toBeGreaterThan(1);
      expect(text.join("")).toBe(textOf(messages[index]));
      expect(own.every((delta) => delta.wake_id === start.wake_id && delta.attempt === 1)).toBe(true);
      // Every delta of the request came before its stored answer.
      const answeredAt = items.indexOf(messages[index] as SessionEvent);
      for (const delta of own) expect(items.indexOf(delta)).toBeLessThan(answeredAt);
    }
    // The tool's arguments streamed too, and add up to what the stored agent.tool_use ran with.
    const argumentPieces = deltas.filter((delta) => delta.type === "agent.tool_use_input_delta");
    expect(argumentPieces.length).toBeGreaterThan(1);
    expect(argumentPieces.every((delta) => delta.name === "set_state")).toBe(true);
    expect(JSON.parse(argumentPieces.map((delta) => delta.partial_json).join(""))).toEqual(STATE);
    const toolUse = stored.find((event) => event.type === "agent.tool_use");
    expect(toolUse).toMatchObject({ name: "set_state", input: STATE });

    // The first piece of the answer reached the client while the model was still writing it.
    const answerRequest = platform.fake.requests.findLast((request) => request.view !== undefined);
    const firstPiece = received.find(
      (entry) => "ephemeral" in entry.item && entry.item.model_request_start_id === starts[1]?.id,
    );
    expect(answerRequest?.finishedAt).toBeDefined();
    expect(firstPiece?.at).toBeLessThan(answerRequest?.finishedAt ?? 0);

    // Stored events: gapless, and no delta among them.
    const all = await client().events.list(session.id, 0, 100);
    expect(all.data.map((event) => event.seq)).toEqual(all.data.map((_, index) => index + 1));
    expect(all.data.filter((event) => event.type.endsWith("_delta") || "ephemeral" in event)).toEqual([]);

    // A reconnect (Last-Event-ID = the user's message) gets every stored event after it, in order,
    // and nothing of the finished request's preview.
    const resumed: Array<SessionEvent | StreamDelta> = [];
    const again = new AbortController();
    const last = all.data.at(-1)?.seq ?? 0;
    for await (const item of client().events.stream(session.id, {
      signal: again.signal,
      deltas: true,
      afterSeq: posted?.seq ?? 0,
    })) {
      resumed.push(item);
      if (!("ephemeral" in item) && item.seq === last) break;
    }
    again.abort();
    expect(resumed).toEqual(all.data.filter((event) => event.seq > (posted?.seq ?? 0)));
  });
});

describe("a retried request", () => {
  it("streams again under a higher attempt, and the preview starts over with it", async () => {
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    const agent = await platform.createAgent({ model: platform.fakeModel("anthropic") });
    const session = await client.sessions.create({ agent });
    platform.fake.enqueue(
      // Overloaded halfway through the answer, as providers do mid-stream; the retry answers whole.
      { error: { status: 529, type: "overloaded_error", message: "Overloaded" }, afterText: "A first try" },
      { text: "The answer, on the second attempt.", chunkDelayMs: 20 },
    );
    const stop = new AbortController();
    const stream = client.events.stream(session.id, { signal: stop.signal, deltas: true });
    const [posted] = (await client.events.send(session.id, [say("retry it")])).events;
    const preview = new LivePreview();
    const previews: string[] = [];
    const received = await readTurn(
      (async function* () {
        for await (const item of stream) {
          if (preview.apply(item)) previews.push(preview.text);
          yield item;
        }
      })(),
      posted?.seq ?? 0,
    );
    stop.abort();

    const deltas = received.flatMap(({ item }) => (item.type === "agent.message_delta" ? [item] : []));
    const text = (attempt: number) =>
      deltas
        .filter((delta) => delta.attempt === attempt)
        .map((delta) => delta.text)
        .join("");
    expect(text(1)).toBe("A first try");
    expect(text(2)).toBe("The answer, on the second attempt.");
    const message = received.find(({ item }) => item.type === "agent.message")?.item as SessionEvent;
    expect(textOf(message)).toBe(text(2));
    // The preview never mixed the attempts: it showed the first try, then only the second one.
    expect(previews).toContain("A first try");
    expect(previews).toContain(text(2));
    expect(previews.filter((shown) => shown.includes("try") && shown.includes("answer"))).toEqual([]);
    expect(previews.at(-1)).toBe("");
  });
});

describe("wakeloop chat", () => {
  let home = "";
  const terminals: TmuxTerminal[] = [];

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "wl-streaming-e2e-"));
  });
  afterAll(async () => {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    await rm(home, { recursive: true, force: true });
  });

  it("prints the answer as the model writes it, and the stored message not again", async () => {
    const agent = await platform.createAgent({ name: "streamer" });
    const words = ["Every", "word", "shows", "up", "as", "soon", "as", "it", "is", "written."];
    platform.fake.enqueue({ text: words.join(" "), chunkDelayMs: 400 });
    const chat = await TmuxTerminal.start({
      command: [
        process.execPath,
        ...entryArgs("packages/cli/src/main.ts", defaultRunMode(), ROOT),
        "chat",
        agent,
      ],
      env: { XDG_CONFIG_HOME: home, WAKELOOP_URL: platform.baseUrl, WAKELOOP_API_KEY: platform.apiKey },
      cwd: ROOT,
    });
    terminals.push(chat);
    await chat.waitFor("you> ");
    const requests = platform.fake.requests.length;
    await chat.sendLine("write slowly");
    await chat.waitFor("Every word");
    // On screen while the model is still writing: the answer's request has not finished.
    const answering = platform.fake.requests[requests];
    expect(answering?.finishedAt).toBeUndefined();
    expect(await chat.screen()).not.toContain("written.");

    await chat.waitFor("you> ", { times: 2 });
    const screen = await chat.screen();
    expect(screen.split(words.join(" ")).length - 1).toBe(1);
    await chat.sendLine("/exit");
    expect(await chat.exitCode()).toBe(0);
  });
});
