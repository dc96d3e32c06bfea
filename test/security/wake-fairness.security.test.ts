import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8 point 8 (wakes in flight): one tenant's burst of sessions must not starve another tenant's
// single session. One worker with three slots, at most two wakes in flight per tenant; tenant A's model
// calls hang, so without the limit A's burst takes every slot and fills the work queue ahead of B.

const SLOW = "slow";
let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    workerEnv: { WORKER_SLOTS: "3" },
    env: { WAKES_IN_FLIGHT_PER_TENANT: "2" },
    script: {
      defaultTurn: (request) =>
        request.lastUserText === SLOW ? { text: SLOW, delayMs: 600_000 } : { text: "ok" },
    },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function post(apiKey: string, path: string, body: unknown) {
  const response = await platform.request("POST", path, body, { authorization: `Bearer ${apiKey}` });
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  return response.body;
}

async function startSession(apiKey: string, text: string): Promise<string> {
  const agent = await post(apiKey, "/v1/agents", { name: "fair", model: platform.fakeModel() });
  const session = await post(apiKey, "/v1/sessions", { agent: agent.id });
  await post(apiKey, `/v1/sessions/${session.id}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  return session.id as string;
}

function wakesOf(tenantId: string) {
  return platform.db
    .selectFrom("wakes")
    .select(["status", "started_at"])
    .where("tenant_id", "=", tenantId)
    .execute();
}

describe("wakes in flight (issue #8 point 8)", () => {
  it("starts another tenant's session while one tenant's burst waits its turn", {
    timeout: 180_000,
  }, async () => {
    const burst = await Promise.all(Array.from({ length: 10 }, () => startSession(platform.apiKey, SLOW)));
    expect(burst).toHaveLength(10);
    // Tenant A's burst is under way: its wakes hold worker slots with hanging model calls.
    await expect
      .poll(async () => (await wakesOf(platform.tenantId)).filter((w) => w.status === "running").length, {
        timeout: 60_000,
        interval: 200,
      })
      .toBeGreaterThanOrEqual(2);

    const other = await platform.createTenant("other");
    const single = await startSession(other.apiKey, "hi");
    await expect
      .poll(
        async () =>
          (
            await platform.request("GET", `/v1/sessions/${single}`, undefined, {
              authorization: `Bearer ${other.apiKey}`,
            })
          ).body.stop_reason?.type,
        { timeout: 60_000, interval: 200 },
      )
      .toBe("end_turn");

    // Tenant A never had more than its two wakes started; the other eight wait in Postgres, in order.
    const a = await wakesOf(platform.tenantId);
    expect(a).toHaveLength(10);
    expect(a.filter((w) => w.started_at !== null)).toHaveLength(2);
    expect(a.filter((w) => w.status === "queued")).toHaveLength(8);
  });
});
