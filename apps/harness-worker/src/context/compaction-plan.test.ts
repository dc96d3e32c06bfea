import { ContextManagement, type EventPayload, type SessionEvent } from "@wakeloop/contracts";
import { SUMMARY_REQUEST_MARKER as FAKE_MARKER } from "@wakeloop/fake-model";
import { describe, expect, it } from "vitest";
import { type ConversationEvent, clearedStub, History, isConversation } from "./assemble-context";
import { chooseCut, compactionEvent, planCompaction } from "./compaction-plan";
import { SUMMARY_REQUEST_MARKER, summaryRequest } from "./summary-request";

function session() {
  let seq = 0;
  return (payload: EventPayload & { id?: string }): SessionEvent => {
    seq += 1;
    return {
      session_id: "s",
      processed_at: null,
      created_at: "2026-12-06T00:00:00.000Z",
      ...payload,
      id: payload.id ?? `e${seq}`,
      seq,
    } as SessionEvent;
  };
}
const text = (t: string) => [{ type: "text" as const, text: t }];
const conversation = (events: SessionEvent[]) => events.filter(isConversation);

/** A user message, then `steps` tool steps each returning `resultChars` characters, then an answer. */
function toolLoop(event: ReturnType<typeof session>, turn: number, steps: number, resultChars: number) {
  const events = [event({ type: "user.message", content: text(`question ${turn}`) })];
  for (let step = 0; step < steps; step++) {
    const id = `c${turn}_${step}`;
    events.push(
      event({
        id,
        type: "agent.tool_use",
        name: "read_file",
        input: { path: `/f${step}` },
        evaluated_permission: "allow",
      }),
      event({ type: "span.model_request_start", model: "m" }),
      event({
        type: "agent.tool_result",
        tool_use_id: id,
        content: text("x".repeat(resultChars)),
        is_error: false,
      }),
    );
  }
  events.push(event({ type: "agent.message", content: text(`answer ${turn}`) }));
  return events;
}

describe("chooseCut", () => {
  it("never cuts between a call and its result, nor leaves nothing after the cut", () => {
    const event = session();
    const events = conversation(toolLoop(event, 1, 3, 400));
    const cut = chooseCut(events, 0);
    expect(cut).not.toBeNull();
    // Every call before the cut has its result before it too.
    const before = events.slice(0, (cut as number) + 1);
    const calls = before.filter((e) => e.type === "agent.tool_use").map((e) => e.id);
    const results = before.flatMap((e) => (e.type === "agent.tool_result" ? [e.tool_use_id] : []));
    expect(results.sort()).toEqual(calls.sort());
    expect(cut).toBeLessThan(events.length - 1);
  });

  it("keeps the newest turns that fit keep_recent_tokens and compacts the rest", () => {
    const event = session();
    const events = conversation([...toolLoop(event, 1, 2, 4_000), ...toolLoop(event, 2, 2, 4_000)]);
    // Each result is about 1 000 tokens: keeping ~2 500 keeps the second question's two steps and
    // the first one's closing answer (a turn boundary too), not its results.
    const cut = chooseCut(events, 2_500) as number;
    expect(events[cut + 1]).toMatchObject({ type: "agent.message", content: text("answer 1") });
    expect(events[cut]).toMatchObject({ type: "agent.tool_result", tool_use_id: "c1_1" });
    // When only the closing answer fits, the cut falls right before it.
    expect(chooseCut(events, 100)).toBe(events.length - 2);
  });

  it("finds no cut while the only turn still waits for a result", () => {
    const event = session();
    const events = conversation([
      event({ type: "user.message", content: text("go") }),
      event({ id: "c", type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" }),
    ]);
    expect(chooseCut(events, 0)).toBe(0);
    expect(chooseCut(events.slice(1), 0)).toBeNull();
  });
});

describe("planCompaction", () => {
  const settings = (threshold: number, clear = true, keep = 1_000) =>
    ContextManagement.parse({
      threshold_tokens: threshold,
      keep_recent_tokens: keep,
      clear_tool_results: clear,
    });

  it("does nothing under the threshold", () => {
    const event = session();
    const events = conversation(toolLoop(event, 1, 3, 4_000));
    expect(
      planCompaction(settings(10_000), { events, cleared: new Set(), fromSeq: 1, requestTokens: 9_000 }),
    ).toBeNull();
  });

  it("clears older tool results first when that is enough, naming each with its tool and size", () => {
    const event = session();
    const events = conversation([...toolLoop(event, 1, 3, 4_000), ...toolLoop(event, 2, 1, 100)]);
    const plan = planCompaction(settings(2_000), {
      events,
      cleared: new Set(),
      fromSeq: 1,
      requestTokens: 3_200,
    });
    expect(plan).toMatchObject({
      strategy: "clear_tool_results",
      fromSeq: 1,
      cleared: [
        { tool_use_id: "c1_0", name: "read_file", chars: 4_000 },
        { tool_use_id: "c1_1", name: "read_file", chars: 4_000 },
        { tool_use_id: "c1_2", name: "read_file", chars: 4_000 },
      ],
    });
  });

  it("summarises when clearing is not enough, or when the agent turned clearing off", () => {
    const event = session();
    const events = conversation([...toolLoop(event, 1, 3, 400), ...toolLoop(event, 2, 1, 100)]);
    const input = { events, cleared: new Set<string>(), fromSeq: 1, requestTokens: 30_000 };
    const plan = planCompaction(settings(2_000, true, 70), input);
    expect(plan?.strategy).toBe("summary");
    if (plan?.strategy !== "summary") return;
    expect(plan.summarised.at(-1)).toMatchObject({ type: "agent.message", content: text("answer 1") });
    expect(plan.toSeq).toBe(plan.summarised.at(-1)?.seq);
    expect(planCompaction(settings(2_000, false, 70), { ...input, requestTokens: 3_000 })?.strategy).toBe(
      "summary",
    );
  });

  it("does not clear a result twice", () => {
    const event = session();
    const events = conversation([...toolLoop(event, 1, 1, 4_000), ...toolLoop(event, 2, 1, 10)]);
    const plan = planCompaction(settings(1_000), {
      events,
      cleared: new Set(["c1_0"]),
      fromSeq: 1,
      requestTokens: 1_500,
    });
    expect(plan?.strategy).toBe("summary");
  });
});

describe("History with compactions", () => {
  it("stubs cleared results and keeps every call with its result", () => {
    const event = session();
    const events = toolLoop(event, 1, 2, 4_000);
    const history = new History();
    for (const e of events) history.add(e);
    const cleared = [{ tool_use_id: "c1_0", name: "read_file", chars: 4_000 }];
    history.add(
      event(
        compactionEvent({ strategy: "clear_tool_results", fromSeq: 1, toSeq: 4, cleared }, null, {
          before: 3_000,
          after: 2_000,
        }),
      ),
    );
    const { messages } = history.messages();
    const results = messages.flatMap((message) => (message.role === "tool" ? message.results : []));
    expect(results.map((result) => result.toolCallId)).toEqual(["c1_0", "c1_1"]);
    expect(results[0]?.content).toEqual(text(clearedStub(cleared[0] as (typeof cleared)[number])));
    expect(results[1]?.content).toEqual(text("x".repeat(4_000)));
  });

  it("opens with the summary, then the turns after its range, and goes on from there", () => {
    const event = session();
    const first = toolLoop(event, 1, 2, 100);
    const second = toolLoop(event, 2, 1, 100);
    const history = new History();
    for (const e of [...first, ...second]) history.add(e);
    const toSeq = first.at(-1)?.seq as number;
    history.add(
      event(
        compactionEvent(
          { strategy: "summary", fromSeq: 1, toSeq, summarised: conversation(first) },
          { text: "the user asked twice", model: "m" },
          { before: 1, after: 1 },
        ),
      ),
    );
    history.add(event({ type: "user.message", content: text("question 3") }));
    const fresh = new History();
    for (const e of second) fresh.add(e);
    fresh.add(event({ type: "user.message", content: text("question 3") }));
    const { messages } = history.messages();
    expect(messages[0]).toMatchObject({ role: "user" });
    expect(JSON.stringify(messages[0])).toContain("the user asked twice");
    // After the summary: exactly the conversation a history of the kept turns alone would be.
    expect(messages.slice(1)).toEqual(fresh.messages().messages);
  });
});

describe("summaryRequest", () => {
  it("opens with the marker the fake model answers, and cuts long tool results", () => {
    expect(SUMMARY_REQUEST_MARKER).toBe(FAKE_MARKER);
    const event = session();
    const events = conversation(toolLoop(event, 1, 1, 50_000)) as ConversationEvent[];
    const request = summaryRequest("m", "before", events);
    expect(request.system.startsWith(SUMMARY_REQUEST_MARKER)).toBe(true);
    expect(request.tools).toEqual([]);
    const body = JSON.stringify(request.messages);
    expect(body).toContain("before");
    expect(body).toContain("read_file (c1_0) returned");
    expect(body.length).toBeLessThan(5_000);
  });
});
