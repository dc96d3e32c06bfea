import { setTimeout as sleep } from "node:timers/promises";
import { trace } from "@opentelemetry/api";
import { type Bus, connectBus } from "@wakeloop/bus";
import {
  AgentSpec,
  type MemoryContextResponse,
  type MemoryRecallResponse,
  type SessionEvent,
} from "@wakeloop/contracts";
import { createMemoryClient, memoryService } from "@wakeloop/memory-client";
import { initialSessionState, reduceSessionState } from "@wakeloop/session-core";
import { createLogger } from "@wakeloop/telemetry";
import { testNatsUrl, testPrefix } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionView } from "../session/session-view";
import { loadWakeMemory, recallForWake } from "./wake-memory";

// Recall against a memory service on real NATS whose answer this test controls: how long it takes and
// what it finds.

let buses: Bus[];
let served: { stop(): Promise<void> };
let delayMs = 0;
let asked: string[] = [];
let answered = 0;
let context: MemoryContextResponse = { skills: [] };
const log = createLogger({ service: "wake-memory-test", level: "silent" });
const tracer = trace.getTracer("wake-memory-test");
const settings = { maxTokens: 1_000, maxHits: 5, timeoutMs: 300 };
const found: MemoryRecallResponse = {
  hits: [
    {
      store: "workspace_memory_notes",
      target: "vpn.md",
      version_id: "mver_1",
      content: "Use the VPN.",
      rank: 0.2,
    },
  ],
};

beforeAll(async () => {
  const prefix = testPrefix();
  buses = await Promise.all(
    ["harness", "memory"].map((name) => connectBus({ servers: testNatsUrl(), prefix, name })),
  );
  served = (buses[1] as Bus).serve(memoryService, {
    execute: () => Promise.reject(new Error("not in this test")),
    context: async () => context,
    recall: async (request) => {
      asked.push(request.text);
      await sleep(delayMs);
      answered += 1;
      return found;
    },
    capture_learning: () => Promise.reject(new Error("not in this test")),
    ping: async () => ({ ready: true as const, replica_id: "test" }),
  });
  await Promise.all(buses.map((bus) => bus.nc.flush()));
});

afterAll(async () => {
  await served?.stop();
  await Promise.all((buses ?? []).map((bus) => bus.close()));
});

/** A session told `messages` no model request has seen, after the `seen` ones a request consumed. */
function view(messages: string[], ready = true, recallable = ready, seen: string[] = []): SessionView {
  const message = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
  const payloads = [
    ...seen.map(message),
    ...(seen.length > 0 ? [{ type: "span.model_request_start", model: "claude" }] : []),
    ...messages.map(message),
  ];
  const events = payloads.map(
    (payload, index) =>
      ({
        id: `sevt_${index}`,
        session_id: "sesn_1",
        seq: index + 1,
        processed_at: null,
        created_at: new Date().toISOString(),
        ...payload,
      }) as SessionEvent,
  );
  const state = events.reduce(
    reduceSessionState,
    initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
  );
  const result = new SessionView({
    tenantId: "tnt_1",
    sessionId: "sesn_1",
    agentId: "agt_1",
    agent: AgentSpec.parse({ name: "a", model: { provider: "anthropic", id: "claude" } }),
    environment: null,
    parentSessionId: null,
    depth: 0,
    state,
    events,
  });
  result.memory = { ready, recallable, skills: [] };
  return result;
}

describe("recallForWake", () => {
  it("recalls for the new messages' text and returns the event saying what was recalled", async () => {
    asked = [];
    delayMs = 0;
    const memory = createMemoryClient(buses[0] as Bus);
    const recall = await recallForWake(memory, tracer, log, view(["vpn?", "staging access"]), settings);
    expect(asked).toEqual(["vpn?\nstaging access"]);
    expect(recall).toEqual({
      type: "session.memory_recalled",
      text: expect.stringMatching(
        /^## Recalled memory\n.*\n\n### workspace_memory_notes\/vpn\.md\nUse the VPN\.$/,
      ),
      message_ids: ["sevt_0", "sevt_1"],
      budget_tokens: 1_000,
      hits: [expect.objectContaining({ target: "vpn.md", version_id: "mver_1", truncated: false })],
      dropped: 0,
    });
  });

  it("recalls for the messages that came after the last model request only", async () => {
    asked = [];
    delayMs = 0;
    const memory = createMemoryClient(buses[0] as Bus);
    const recall = await recallForWake(
      memory,
      tracer,
      log,
      view(["vpn?"], true, true, ["old", "older"]),
      settings,
    );
    expect(asked).toEqual(["vpn?"]);
    expect(recall).toMatchObject({ message_ids: ["sevt_3"] });
  });

  it("goes on without recall once the timeout passes", async () => {
    delayMs = 2_000;
    answered = 0;
    const memory = createMemoryClient(buses[0] as Bus);
    const recall = await recallForWake(memory, tracer, log, view(["staging access"]), settings);
    expect(recall).toBeNull();
    // The service was still working on it: the wake did not wait for its answer.
    expect(answered).toBe(0);
  });

  it("asks nothing when memory is not ready, has nothing to recall, recall is off, or there is no new text", async () => {
    asked = [];
    delayMs = 0;
    const memory = createMemoryClient(buses[0] as Bus);
    const none = null;
    expect(await recallForWake(memory, tracer, log, view(["vpn"], false), settings)).toEqual(none);
    expect(await recallForWake(memory, tracer, log, view(["vpn"], true, false), settings)).toEqual(none);
    expect(await recallForWake(memory, tracer, log, view(["vpn"]), { ...settings, maxTokens: 0 })).toEqual(
      none,
    );
    expect(await recallForWake(memory, tracer, log, view([]), settings)).toEqual(none);
    expect(await recallForWake(null, tracer, log, view(["vpn"]), settings)).toEqual(none);
    expect(asked).toEqual([]);
  });
});

describe("loadWakeMemory", () => {
  const scope = { tenantId: "tnt_1", agentId: "agt_1" };

  it("takes the skills index and whether recall could find anything from the service", async () => {
    const memory = createMemoryClient(buses[0] as Bus);
    context = { skills: [{ name: "deploy", description: "How to deploy" }], recallable: false };
    expect(await loadWakeMemory(memory, tracer, log, scope, 1_000)).toEqual({
      ready: true,
      recallable: false,
      skills: [{ name: "deploy", description: "How to deploy" }],
    });
    // A service that does not say (older than the field) is asked for recall.
    context = { skills: [] };
    expect(await loadWakeMemory(memory, tracer, log, scope, 1_000)).toMatchObject({
      ready: true,
      recallable: true,
    });
  });

  it("gives the wake no memory when no replica answers", async () => {
    const nobody = createMemoryClient(
      await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "nobody" }).then((bus) => {
        buses.push(bus);
        return bus;
      }),
      { pingTimeoutMs: 200 },
    );
    expect(await loadWakeMemory(nobody, tracer, log, scope, 1_000)).toEqual({
      ready: false,
      recallable: false,
      skills: [],
    });
  });
});
