import type { EventPayload, SessionState } from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unrunCallIds } from "./interrupt";
import { initialSessionState, type ReducibleEvent, reduceSessionState } from "./reducer";
import { wakeReason } from "./wake-decision";

const init = () => initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: 1_000 } });

function fold(events: Array<EventPayload & { id: string }>, state: SessionState = init()): SessionState {
  return events.reduce<SessionState>(
    (acc, event) => reduceSessionState(acc, { ...event, seq: acc.last_seq + 1 } as ReducibleEvent),
    state,
  );
}

const text = (t: string) => [{ type: "text" as const, text: t }];

describe("reduceSessionState", () => {
  it("records revealed tools once each, in reveal order, from search results and allowed calls", () => {
    const state = fold([
      { id: "c1", type: "agent.tool_use", name: "tool_search", input: {}, evaluated_permission: "allow" },
      {
        id: "t1",
        type: "agent.tool_result",
        tool_use_id: "c1",
        content: text("{}"),
        is_error: false,
        revealed_tools: ["set_reminder", "memory_read", "set_reminder"],
      },
      { id: "c2", type: "agent.tool_use", name: "memory_read", input: {}, evaluated_permission: "allow" },
      { id: "c3", type: "agent.tool_use", name: "made_up", input: {}, evaluated_permission: "deny" },
      {
        id: "c4",
        type: "agent.mcp_tool_use",
        name: "mcp__crm__find",
        mcp_server_name: "crm",
        input: {},
        evaluated_permission: "ask",
      },
    ]);
    // A refused call (unknown or denied) reveals nothing.
    expect(state.revealed_tools).toEqual(["tool_search", "set_reminder", "memory_read", "mcp__crm__find"]);
    expect(state.pending_actions.map((action) => action.event_id)).toEqual(["c4"]);
  });

  it("queues messages until a model request consumes them", () => {
    const queued = fold([{ id: "m1", type: "user.message", content: text("hi") }]);
    expect(queued.unprocessed_message_ids).toEqual(["m1"]);
    expect(wakeReason(queued)).toBe("user_message");

    const consumed = fold(
      [
        { id: "r1", type: "session.status_running" },
        { id: "s1", type: "span.model_request_start", model: "m" },
      ],
      queued,
    );
    expect(consumed.unprocessed_message_ids).toEqual([]);
    expect(consumed.status).toBe("running");
    expect(wakeReason(consumed)).toBeNull();
  });

  it("records a recall without consuming the messages it was for", () => {
    const queued = fold([
      { id: "m1", type: "user.message", content: text("staging password?") },
      { id: "r1", type: "session.status_running" },
    ]);
    const recalled = fold(
      [
        {
          id: "c1",
          type: "session.memory_recalled",
          message_ids: ["m1"],
          budget_tokens: 1_000,
          hits: [
            {
              store: "workspace_memory_notes",
              target: "staging.md",
              version_id: "v1",
              tokens: 20,
              truncated: false,
            },
          ],
          dropped: 0,
        },
      ],
      queued,
    );
    expect(recalled).toEqual({ ...queued, last_seq: queued.last_seq + 1 });
    expect(recalled.unprocessed_message_ids).toEqual(["m1"]);
  });

  it("shows the approver of an exec-policy ask the command and the variables it runs with", () => {
    const exec = { command: "ls", env: { BASH_ENV: "/workspace/x.sh" }, reason: "it sets BASH_ENV" };
    const waiting = fold([
      {
        id: "t1",
        type: "agent.tool_use",
        name: "shell_run",
        input: { command: "ls" },
        evaluated_permission: "ask",
        exec,
      },
      { id: "t2", type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" },
    ]);
    expect(waiting.pending_actions.map((action) => action.exec)).toEqual([exec, undefined]);
    expect("exec" in (waiting.pending_actions[1] ?? {})).toBe(false);
  });

  it("blocks on every pending action and wakes once all are answered", () => {
    const waiting = fold([
      { id: "t1", type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" },
      { id: "c1", type: "agent.custom_tool_use", name: "lookup", input: { q: 1 } },
      {
        id: "i1",
        type: "session.status_idle",
        stop_reason: { type: "requires_action", event_ids: ["t1", "c1"] },
      },
    ]);
    expect(waiting.pending_actions.map((a) => [a.event_id, a.kind])).toEqual([
      ["t1", "tool_confirmation"],
      ["c1", "custom_tool_result"],
    ]);
    const half = fold(
      [{ id: "a1", type: "user.tool_confirmation", tool_use_id: "t1", result: "allow" }],
      waiting,
    );
    expect(wakeReason(half)).toBeNull();
    const all = fold(
      [{ id: "a2", type: "user.custom_tool_result", custom_tool_use_id: "c1", content: text("x") }],
      half,
    );
    expect(all.answered_action_ids).toEqual(["t1", "c1"]);
    expect(wakeReason(all)).toBe("tool_confirmation");
  });

  it("ignores answers for ids that are not pending", () => {
    const state = fold([{ id: "a1", type: "user.tool_confirmation", tool_use_id: "nope", result: "allow" }]);
    expect(state.answered_action_ids).toEqual([]);
    expect(wakeReason(state)).toBeNull();
  });

  it("resumes a budget-stopped session only when the budget is raised", () => {
    const spent = fold([
      {
        id: "u1",
        type: "session.usage",
        usage: {
          input_tokens: 900,
          output_tokens: 200,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
        budget: { max_total_tokens: 1_000 },
      },
      { id: "i1", type: "session.status_idle", stop_reason: { type: "budget_reached" } },
    ]);
    expect(wakeReason(spent)).toBeNull();
    const raised = fold([{ id: "up", type: "session.updated", budget: { max_total_tokens: 5_000 } }], spent);
    expect(wakeReason(raised)).toBe("budget_raised");
  });

  it("keeps the session's cost from its usage events, and an event without one leaves it unknown", () => {
    const usage = {
      input_tokens: 1,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    expect(init().cost_micro_usd).toBe(0);
    const budget = { max_total_tokens: null, max_cost_micro_usd: 10_000 };
    const priced = fold([
      {
        id: "u1",
        type: "session.usage",
        usage,
        budget,
        cost: { step_micro_usd: 12_000, wake_micro_usd: 12_000, session_micro_usd: 12_000 },
      },
    ]);
    expect(priced.cost_micro_usd).toBe(12_000);
    expect(wakeReason({ ...priced, unprocessed_message_ids: ["m1"] })).toBeNull();
    // Written before costs were kept: what the session cost is not known.
    expect(fold([{ id: "u2", type: "session.usage", usage, budget }], priced).cost_micro_usd).toBeNull();
  });

  it("never wakes a terminated session", () => {
    const state = fold([
      { id: "x", type: "session.status_terminated", reason: "archived" },
      { id: "m", type: "user.message", content: text("late") },
    ]);
    expect(state.status).toBe("terminated");
    expect(wakeReason(state)).toBeNull();
  });

  it("stays terminated whatever status a late wake reports", () => {
    const state = fold([
      { id: "r", type: "session.status_running" },
      { id: "x", type: "session.status_terminated", reason: "archived" },
      { id: "i", type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ]);
    expect(state).toMatchObject({ status: "terminated", termination_reason: "archived", last_seq: 3 });
  });

  it("is a pure fold: replaying the same events gives identical JSON", () => {
    const events: Array<EventPayload & { id: string }> = [
      { id: "m1", type: "user.message", content: text("a") },
      { id: "r", type: "session.status_running" },
      { id: "s", type: "sandbox.status", status: "ready" },
      { id: "t1", type: "agent.tool_use", name: "read", input: { path: "a" }, evaluated_permission: "allow" },
      { id: "tr", type: "agent.tool_result", tool_use_id: "t1", content: text("ok"), is_error: false },
      { id: "i", type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ];
    expect(JSON.stringify(fold(events))).toBe(JSON.stringify(fold(events)));
    expect(fold(events).last_seq).toBe(6);
  });

  it("passes a context compaction through: only last_seq moves, and replays the same", () => {
    const before = fold([
      { id: "m1", type: "user.message", content: text("a") },
      { id: "a1", type: "agent.message", content: text("b") },
    ]);
    const compaction: EventPayload & { id: string } = {
      id: "c",
      type: "session.compaction",
      strategy: "summary",
      summary: "the user said a",
      replaces: { from_seq: 1, to_seq: 1 },
      cleared_tool_results: [],
      tokens_before: 10,
      tokens_after: 5,
      model: "m",
    };
    const after = fold([compaction], before);
    expect(after).toEqual({ ...before, last_seq: 3 });
    expect(JSON.stringify(fold([compaction], before))).toBe(JSON.stringify(after));
  });

  it("stops answered calls that have not run when the user interrupts, and wakes nothing for them", () => {
    const answered = fold([
      { id: "t1", type: "agent.tool_use", name: "set_state", input: {}, evaluated_permission: "ask" },
      { id: "t2", type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" },
      { id: "c1", type: "agent.custom_tool_use", name: "lookup", input: {} },
      {
        id: "i1",
        type: "session.status_idle",
        stop_reason: { type: "requires_action", event_ids: ["t1", "t2", "c1"] },
      },
      { id: "a1", type: "user.tool_confirmation", tool_use_id: "t1", result: "allow" },
      { id: "a2", type: "user.custom_tool_result", custom_tool_use_id: "c1", content: text("x") },
    ]);
    expect(answered.confirmed_call_ids).toEqual(["t1"]);

    const interrupted = fold([{ id: "x", type: "user.interrupt" }], answered);
    expect(interrupted).toMatchObject({
      interrupt_requested: true,
      pending_actions: [],
      answered_action_ids: [],
      confirmed_call_ids: [],
      // The custom tool's answer is its result already; the other two still need theirs.
      interrupted_call_ids: ["t2", "t1"],
    });
    expect(unrunCallIds(interrupted)).toEqual(["t2", "t1"]);
    // A late answer names nothing pending any more.
    const late = fold(
      [{ id: "a3", type: "user.tool_confirmation", tool_use_id: "t2", result: "allow" }],
      interrupted,
    );
    expect(late.confirmed_call_ids).toEqual([]);

    const ended = fold(
      [
        { id: "r1", type: "agent.tool_result", tool_use_id: "t2", content: text("stopped"), is_error: true },
        { id: "r2", type: "agent.tool_result", tool_use_id: "t1", content: text("stopped"), is_error: true },
        { id: "i2", type: "session.status_idle", stop_reason: { type: "end_turn" } },
      ],
      late,
    );
    expect(ended).toMatchObject({ interrupt_requested: false, interrupted_call_ids: [] });
    expect(wakeReason(ended)).toBeNull();
  });

  it("holds a child's carved budget against the parent and charges what the child spent instead", () => {
    const spent = (tokens: number) => ({
      input_tokens: tokens,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const spawned = fold([
      { id: "u1", type: "session.usage", usage: spent(200), budget: { max_total_tokens: 1_000 } },
      { id: "c1", type: "session.child_created", child_session_id: "kid1", token_budget: 500 },
      { id: "c2", type: "session.child_created", child_session_id: "kid2", token_budget: 300 },
    ]);
    expect(spawned.delegated_tokens).toBe(800);
    // 200 own + 800 held: the parent cannot spend what it gave its children.
    const stopped = fold(
      [{ id: "i1", type: "session.status_idle", stop_reason: { type: "budget_reached" } }],
      spawned,
    );
    expect(wakeReason(stopped)).toBeNull();
    const done = fold(
      [
        {
          id: "d1",
          type: "session.child_completed",
          child_session_id: "kid1",
          status: "completed",
          result: "ok",
          tokens_used: 120,
          token_budget: 500,
        },
      ],
      stopped,
    );
    expect(done.delegated_tokens).toBe(420);
    // The unspent rest came back, so the budget-stopped parent can go on.
    expect(wakeReason(done)).toBe("budget_raised");
    // Events written before budgets were carved hold and charge nothing.
    const legacy = fold([
      { id: "c1", type: "session.child_created", child_session_id: "kid1" },
      {
        id: "d1",
        type: "session.child_completed",
        child_session_id: "kid1",
        status: "completed",
        result: null,
      },
    ]);
    expect(legacy.delegated_tokens).toBe(0);
  });

  it("folds the outcome a person defined, the latest one winning, and wakes the session for it once", () => {
    const first = fold([
      {
        id: "o1",
        type: "user.define_outcome",
        description: "Ship the fix\nwith tests",
        criteria: ["tests pass"],
      },
    ]);
    expect(first.defined_outcome).toEqual({
      event_id: "o1",
      title: "Ship the fix",
      criteria: ["tests pass"],
    });
    // A person's outcome is input: it wakes an idle session, and the next model request consumes it.
    expect(first.unprocessed_message_ids).toEqual(["o1"]);
    expect(wakeReason(first)).toBe("user_message");
    const consumed = fold([{ id: "r1", type: "span.model_request_start", model: "m" }], first);
    expect(wakeReason(consumed)).toBeNull();
    expect(consumed.defined_outcome?.event_id).toBe("o1");
    const second = fold([{ id: "o2", type: "user.define_outcome", description: "x".repeat(300) }], first);
    expect(second.defined_outcome).toEqual({ event_id: "o2", title: "x".repeat(200), criteria: [] });
    // Replaying the same events reproduces the projection byte for byte.
    const events = [
      {
        id: "o1",
        type: "user.define_outcome" as const,
        description: "Ship the fix\nwith tests",
        criteria: ["a"],
      },
      { id: "m1", type: "user.message" as const, content: text("go") },
    ];
    expect(JSON.stringify(fold(events))).toBe(JSON.stringify(fold(events)));
  });

  it("reads a projection stored before delegated tokens and defined outcomes were folded", async () => {
    const { SessionState } = await import("@wakeloop/contracts");
    const { delegated_tokens, defined_outcome, ...stored } = init();
    expect(SessionState.parse(JSON.parse(JSON.stringify(stored)))).toEqual(init());
  });

  it("reads a projection stored before answered calls were tracked", async () => {
    const { SessionState } = await import("@wakeloop/contracts");
    const { confirmed_call_ids, interrupted_call_ids, ...stored } = init();
    expect(SessionState.parse(JSON.parse(JSON.stringify(stored)))).toEqual(init());
  });
});

/** Random histories over a few calls: asks, custom calls, answers, results, interrupts, turn boundaries. */
const step = fc.oneof(
  fc.constant({ kind: "ask" as const }),
  fc.constant({ kind: "custom" as const }),
  fc.record({
    kind: fc.constantFrom("allow" as const, "deny" as const, "reply" as const, "result" as const),
    call: fc.nat(5),
  }),
  fc.constant({ kind: "interrupt" as const }),
  fc.constant({ kind: "model_start" as const }),
  fc.constant({ kind: "running" as const }),
  fc.constant({ kind: "idle" as const }),
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

function toEvents(steps: Step[]): Array<EventPayload & { id: string }> {
  const calls: string[] = [];
  return steps.map((s, index): EventPayload & { id: string } => {
    const id = `e${index}`;
    const call = "call" in s ? (calls[s.call % Math.max(calls.length, 1)] ?? "none") : "none";
    switch (s.kind) {
      case "ask":
        calls.push(id);
        return { id, type: "agent.tool_use", name: "set_state", input: {}, evaluated_permission: "ask" };
      case "custom":
        calls.push(id);
        return { id, type: "agent.custom_tool_use", name: "lookup", input: {} };
      case "allow":
      case "deny":
        return { id, type: "user.tool_confirmation", tool_use_id: call, result: s.kind };
      case "reply":
        return { id, type: "user.custom_tool_result", custom_tool_use_id: call, content: text("r") };
      case "result":
        return { id, type: "agent.tool_result", tool_use_id: call, content: text("r"), is_error: false };
      case "interrupt":
        return { id, type: "user.interrupt" };
      case "model_start":
        return { id, type: "span.model_request_start", model: "m" };
      case "running":
        return { id, type: "session.status_running" };
      default:
        return { id, type: "session.status_idle", stop_reason: { type: "end_turn" } };
    }
  });
}

describe("reduceSessionState after an interrupt (property)", () => {
  it("never lets a call that had not run when the user interrupted become runnable again", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const events = toEvents(steps);
        let state = init();
        /** Calls stopped by an interrupt, until a result settles them. */
        const stopped = new Set<string>();
        for (const event of events) {
          const before = state;
          state = reduceSessionState(state, { ...event, seq: state.last_seq + 1 } as ReducibleEvent);
          if (event.type === "user.interrupt") for (const id of unrunCallIds(before)) stopped.add(id);
          if (event.type === "agent.tool_result") stopped.delete(event.tool_use_id);
          for (const id of stopped) {
            // Not answerable, not waiting to run, not a reason to wake; still owed its error result.
            expect(state.pending_actions.map((action) => action.event_id)).not.toContain(id);
            expect(state.confirmed_call_ids).not.toContain(id);
            expect(state.answered_action_ids).not.toContain(id);
            expect(state.interrupted_call_ids).toContain(id);
          }
        }
      }),
    );
  });
});
