import { AgentSpec, type SessionEvent } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import { describe, expect, it } from "vitest";
import { SessionView } from "../session/session-view";
import type { WakeSettings } from "../wake-settings";
import { buildModelRequest, continueConversation, conversationOf, pendingCompaction } from "./build-request";

// Only the platform tool settings enter a request's tool set.
const settings = {
  globalToolPolicy: {},
  maxSubSessionDepth: 2,
  maxChildrenPerSession: 10,
  webSearch: false,
  browserImages: [],
  promptCache: "5m",
} as unknown as WakeSettings;

/** A new wake's view of a session of an agent built from `spec` (a new object each time, as each wake reads it). */
function wakeView(spec: Record<string, unknown> = {}): SessionView {
  return new SessionView({
    tenantId: "tnt_1",
    sessionId: "sesn_1",
    agentId: "agt_1",
    agent: AgentSpec.parse({ name: "a", model: { provider: "anthropic", id: "claude" }, ...spec }),
    environment: null,
    parentSessionId: null,
    depth: 0,
    state: initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
    events: [],
  });
}

const toolNames = (view: SessionView) =>
  buildModelRequest(view, settings).request.tools.map((tool) => tool.name);

describe("buildModelRequest's tool set", () => {
  it("is computed once for wakes of the same agent in the same situation", () => {
    const first = buildModelRequest(wakeView(), settings);
    const second = buildModelRequest(wakeView(), settings);
    expect(first.request.tools.length).toBeGreaterThan(0);
    expect(second.request.tools).toBe(first.request.tools);
    expect(second.effective).toBe(first.effective);
  });

  it("is computed again when the agent's spec or the session's situation differs", () => {
    expect(toolNames(wakeView())).toContain("set_state");
    expect(toolNames(wakeView({ tool_policy: { deny: ["set_state"] } }))).not.toContain("set_state");
    // At the deepest level sessions may not spawn sub-sessions (a deferred tool: in the callable set).
    const callable = (view: SessionView) =>
      buildModelRequest(view, settings).effective.tools.map((tool) => tool.name);
    expect(callable(wakeView())).toContain("spawn_session");
    expect(callable(new SessionView(nestedInit()))).not.toContain("spawn_session");
    // The shared set of the first spec is untouched by the others.
    expect(toolNames(wakeView())).toContain("set_state");
  });
});

describe("buildModelRequest's offered tools", () => {
  it("offers a default agent its core and tool_search, and appends what a search revealed", () => {
    const view = wakeView();
    const before = toolNames(view);
    expect(before).toContain("tool_search");
    expect(before).not.toContain("spawn_session");
    const envelope = { session_id: "sesn_1", processed_at: null, created_at: "2026-11-26T00:00:00.000Z" };
    view.apply([
      {
        ...envelope,
        id: "sevt_1",
        seq: 1,
        type: "agent.tool_use",
        name: "tool_search",
        input: { query: "spawn" },
        evaluated_permission: "allow",
      },
      {
        ...envelope,
        id: "sevt_2",
        seq: 2,
        type: "agent.tool_result",
        tool_use_id: "sevt_1",
        content: [{ type: "text", text: "{}" }],
        is_error: false,
        revealed_tools: ["spawn_session", "set_reminder"],
      },
    ]);
    expect(toolNames(view)).toEqual([...before, "spawn_session", "set_reminder"]);
  });
});

/** A sub-session at the settings' deepest level. */
function nestedInit(): ConstructorParameters<typeof SessionView>[0] {
  return {
    tenantId: "tnt_1",
    sessionId: "sesn_2",
    agentId: "agt_1",
    agent: AgentSpec.parse({ name: "a", model: { provider: "anthropic", id: "claude" } }),
    environment: null,
    parentSessionId: "sesn_1",
    depth: 2,
    state: initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
    events: [],
  };
}

/** A view of a session whose history is `turns` exchanges, a new object per wake as each wake reads it. */
function sessionOf(turns: number): SessionView {
  const events = Array.from({ length: turns }, (_, turn) => [
    { type: "user.message", content: [{ type: "text", text: `question ${turn}` }] },
    { type: "span.model_request_start", model: "claude" },
    { type: "agent.message", content: [{ type: "text", text: `answer ${turn}` }] },
  ])
    .flat()
    .map((payload, index) => ({
      id: `sevt_${index}`,
      session_id: "sesn_1",
      seq: index + 1,
      processed_at: null,
      created_at: "2026-11-26T00:00:00.000Z",
      ...payload,
    })) as SessionEvent[];
  return new SessionView({ ...nestedInit(), sessionId: "sesn_1", depth: 0, events });
}

describe("buildModelRequest's history", () => {
  it("goes on from the conversation an earlier wake built, as if built from the whole history", () => {
    const earlier = sessionOf(2);
    const before = buildModelRequest(earlier, settings).request.messages;
    const conversation = conversationOf(earlier);
    expect(conversation).not.toBeNull();

    const next = sessionOf(3);
    continueConversation(next, conversation as NonNullable<typeof conversation>);
    const continued = buildModelRequest(next, settings).request.messages;
    expect(continued).toEqual(buildModelRequest(sessionOf(3), settings).request.messages);
    expect(continued).toHaveLength(6);
    // The earlier wake's messages are the very objects: a provider encodes each one once.
    expect(continued[0]).toBe(before[0]);
  });
});

describe("buildModelRequest's prompt caching", () => {
  it("asks for the cache under the session's id, so its steps and wakes share one prefix", () => {
    const first = buildModelRequest(sessionOf(1), settings).request;
    const later = buildModelRequest(sessionOf(3), settings).request;
    expect(first.cache).toEqual({ key: "sesn_1", ttl: "5m" });
    expect(later.cache).toEqual(first.cache);
    // Nothing before the history differs from wake to wake.
    expect(later.system).toBe(first.system);
    expect(later.tools).toBe(first.tools);
  });

  it("asks for none when the operator turned caching off", () => {
    const off = { ...settings, promptCache: null } as WakeSettings;
    expect(buildModelRequest(sessionOf(1), off).request.cache).toBeUndefined();
  });
});

describe("pendingCompaction", () => {
  const managed = {
    context_management: { threshold_tokens: 2_000, keep_recent_tokens: 1_000 },
    tool_policy: { allow: ["get_state"] },
  };
  const say = (seq: number, type: "user.message" | "agent.message", text: string) =>
    ({
      id: `e${seq}`,
      seq,
      session_id: "sesn_1",
      processed_at: null,
      created_at: "2026-12-06T00:00:00.000Z",
      type,
      content: [{ type: "text", text }],
    }) as SessionEvent;

  it("is none for an agent without context_management, however long the history", () => {
    const view = wakeView();
    view.apply([
      say(1, "user.message", "a".repeat(40_000)),
      say(2, "agent.message", "ok"),
      say(3, "user.message", "b"),
    ]);
    expect(pendingCompaction(view, settings)).toBeNull();
  });

  it("summarises older turns past the threshold", () => {
    const view = wakeView(managed);
    view.apply([
      say(1, "user.message", "a".repeat(12_000)),
      say(2, "agent.message", "ok"),
      say(3, "user.message", "b"),
    ]);
    const pending = pendingCompaction(view, settings);
    // The long first message is summarised; the reply and the new message fit keep_recent_tokens.
    expect(pending?.plan).toMatchObject({ strategy: "summary", fromSeq: 1, toSeq: 1 });
    expect(pending?.tokensBefore).toBeGreaterThan(2_000);
  });

  it("asks for no summary that could leave the request no smaller (the kept turn is the large part)", () => {
    const view = wakeView(managed);
    view.apply([
      say(1, "user.message", "a"),
      say(2, "agent.message", "ok"),
      say(3, "user.message", "b".repeat(40_000)),
    ]);
    expect(pendingCompaction(view, settings)).toBeNull();
  });
});
