import { Agent, ApiError, ScheduledTask, ScheduledTaskList } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;
let agentId: string;

beforeAll(async () => {
  gw = await startGateway({ quotas: { scheduledTasksPerAgent: 2 } });
  key = gw.tenant.ownerKey;
  agentId = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body).id;
});
afterAll(async () => {
  await gw?.close();
});

const tasksPath = () => `/v1/agents/${agentId}/scheduled_tasks`;

async function storedTasks(): Promise<number> {
  const rows = await gw.db.selectFrom("schedules").select("id").where("agent_id", "=", agentId).execute();
  return rows.length;
}

describe("/v1/agents/{id}/scheduled_tasks", () => {
  it("creates a cron task in a time zone, lists, pauses, resumes and cancels it", async () => {
    const created = await gw.request("POST", tasksPath(), {
      key,
      body: {
        name: "weekly",
        task: "summarise the week",
        cron: "0 9 * * MON",
        timezone: "Europe/Paris",
        token_limit: 2_000,
        model: "anthropic/claude-haiku-test",
      },
    });
    expect(created.status).toBe(200);
    const task = ScheduledTask.parse(created.body);
    expect(task).toMatchObject({
      type: "cron",
      timezone: "Europe/Paris",
      enabled: true,
      token_limit: 2_000,
      model: "claude-haiku-test",
    });
    expect(new Date(task.next_run ?? 0).getTime()).toBeGreaterThan(Date.now());

    const path = `${tasksPath()}/${task.id}`;
    expect(ScheduledTask.parse((await gw.request("POST", `${path}/disable`, { key })).body).enabled).toBe(
      false,
    );
    expect(ScheduledTaskList.parse((await gw.request("GET", tasksPath(), { key })).body).tasks).toEqual([]);
    const all = await gw.request("GET", `${tasksPath()}?include_disabled=true`, { key });
    expect(ScheduledTaskList.parse(all.body).tasks.map((t) => t.id)).toEqual([task.id]);
    expect(ScheduledTask.parse((await gw.request("POST", `${path}/enable`, { key })).body).enabled).toBe(
      true,
    );
    expect(ScheduledTask.parse((await gw.request("GET", path, { key })).body).id).toBe(task.id);

    expect((await gw.request("DELETE", path, { key })).body).toEqual({ id: task.id, deleted: true });
    expect((await gw.request("DELETE", path, { key })).status).toBe(404);
    expect((await gw.request("GET", path, { key })).status).toBe(404);
  });

  it("answers a schedule that cannot fire with a 400 naming the problem, and stores nothing", async () => {
    const before = await storedTasks();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ cron: "0 25 * * *" }, /invalid cron expression/],
      [{ cron: "0 9 * * *", timezone: "Atlantis/Capital" }, /unknown time zone Atlantis\/Capital/],
      [{ at: "2001-01-01T00:00:00Z" }, /in the past/],
      [{ at: "2099-01-01T00:00:00Z", cron: "0 9 * * *" }, /exactly one of/],
      [{}, /exactly one of/],
      // The agent talks to anthropic: another provider's model, or one not of its family, is refused.
      [{ cron: "0 9 * * *", model: "openai/gpt-4.1-mini" }, /this agent talks to anthropic/],
      [{ cron: "0 9 * * *", model: "gpt-4.1-mini" }, /not a model of anthropic/],
    ];
    for (const [schedule, message] of cases) {
      const response = await gw.request("POST", tasksPath(), {
        key,
        body: { name: "bad", task: "x", ...schedule },
      });
      expect(response.status).toBe(400);
      expect(ApiError.parse(response.body).error.message).toMatch(message);
    }
    expect(await storedTasks()).toBe(before);
  });

  it("refuses a task over the per-agent limit with a 409 and stores nothing", async () => {
    const body = { name: "daily", task: "check", cron: "0 6 * * *" };
    for (let i = await storedTasks(); i < 2; i += 1) {
      expect((await gw.request("POST", tasksPath(), { key, body })).status).toBe(200);
    }
    const over = await gw.request("POST", tasksPath(), { key, body });
    expect(over.status).toBe(409);
    expect(ApiError.parse(over.body).error.message).toMatch(/limit/);
    expect(await storedTasks()).toBe(2);
  });

  it("finds nothing of another tenant's agent", async () => {
    const other = await gw.newTenant("other");
    const response = await gw.request("POST", tasksPath(), {
      key: other.ownerKey,
      body: { name: "x", task: "x", cron: "* * * * *" },
    });
    expect(response.status).toBe(404);
    expect((await gw.request("GET", tasksPath(), { key: other.ownerKey })).status).toBe(404);
  });
});
