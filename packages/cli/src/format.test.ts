import type { Agent, SessionEvent } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { agentTable, describeEvent, pendingQuestion, table, tailLine, truncate } from "./format";

const envelope = { id: "sevt_1", session_id: "sesn_1", seq: 7, processed_at: null, created_at: "t" };
const event = (payload: Record<string, unknown>) => ({ ...envelope, ...payload }) as SessionEvent;

describe("table", () => {
  it("aligns columns and leaves the last one unpadded", () => {
    expect(
      table(
        ["ID", "NAME"],
        [
          ["a", "long name"],
          ["bbbb", "x"],
        ],
      ),
    ).toBe("ID    NAME\na     long name\nbbbb  x");
    expect(table(["ID"], [])).toBe("(none)");
  });

  it("lists agents with their model", () => {
    const agent = {
      id: "agent_1",
      name: "helper",
      version: 2,
      model: { provider: "anthropic", id: "claude" },
      updated_at: "2026-01-01T00:00:00.000Z",
    } as Agent;
    expect(agentTable([agent]).split("\n")[1]).toBe(
      "agent_1  helper  2        anthropic/claude  2026-01-01T00:00:00.000Z",
    );
  });
});

describe("describeEvent", () => {
  it("shows messages as their text and tool calls with their input and permission", () => {
    expect(describeEvent(event({ type: "agent.message", content: [{ type: "text", text: "Hi" }] }))).toBe(
      "Hi",
    );
    expect(
      describeEvent(
        event({
          type: "agent.tool_use",
          name: "set_state",
          input: { key: "k" },
          evaluated_permission: "ask",
        }),
      ),
    ).toBe('→ set_state {"key":"k"} (needs your approval)');
    expect(
      describeEvent(
        event({
          type: "agent.tool_result",
          tool_use_id: "x",
          content: [{ type: "text", text: "no" }],
          is_error: true,
        }),
      ),
    ).toBe("← error: no");
    expect(describeEvent(event({ type: "session.status_idle", stop_reason: { type: "end_turn" } }))).toBe(
      "idle (end_turn)",
    );
  });

  it("shows usage with the prompt cache's share and the wake's and session's cost", () => {
    const usage = {
      input_tokens: 120,
      output_tokens: 40,
      cache_read_input_tokens: 14_000,
      cache_creation_input_tokens: 300,
    };
    const budget = { max_total_tokens: null };
    expect(
      describeEvent(
        event({
          type: "session.usage",
          usage,
          budget,
          cost: { step_micro_usd: 6_185, wake_micro_usd: 16_500, session_micro_usd: null },
        }),
      ),
    ).toBe(
      "usage: 120 in (+14000 cache read, 300 cache write), 40 out; cost $0.0165 this wake, unknown in all",
    );
    expect(
      describeEvent(
        event({
          type: "session.usage",
          usage: { ...usage, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
          budget,
        }),
      ),
    ).toBe("usage: 120 in, 40 out");
  });

  it("says what a context compaction replaced and what it saved", () => {
    const compaction = {
      type: "session.compaction",
      replaces: { from_seq: 1, to_seq: 31 },
      tokens_before: 41_000,
      tokens_after: 9_500,
    };
    expect(
      describeEvent(
        event({
          ...compaction,
          strategy: "summary",
          summary: "The user asked.",
          cleared_tool_results: [],
          model: "m",
        }),
      ),
    ).toBe("context compacted: events 1–31 summarised by m (41000 → 9500 tokens): The user asked.");
    expect(
      describeEvent(
        event({
          ...compaction,
          strategy: "clear_tool_results",
          summary: null,
          cleared_tool_results: [{ tool_use_id: "sevt_3", name: "read_file", chars: 9_000 }],
          model: null,
        }),
      ),
    ).toBe("context compacted: 1 older tool results cleared (events 1–31; 41000 → 9500 tokens)");
  });

  it("prefixes tail lines with seq and type", () => {
    expect(tailLine(event({ type: "session.status_running" }))).toBe("[7] session.status_running  running");
  });

  it("flattens and shortens long values", () => {
    expect(truncate("a\n  b")).toBe("a b");
    expect(truncate("x".repeat(300))).toHaveLength(200);
  });
});

describe("pendingQuestion", () => {
  it("shows what an exec approval would run", () => {
    expect(
      pendingQuestion({
        event_id: "e",
        kind: "tool_confirmation",
        name: "bash",
        input: { command: "ls" },
        exec: { command: "ls -la", env: { FOO: "1" }, reason: "not on the allowlist" },
      }),
    ).toBe('bash {"command":"ls"}\n  command: ls -la\n  sets: FOO\n  why asked: not on the allowlist');
  });
});
