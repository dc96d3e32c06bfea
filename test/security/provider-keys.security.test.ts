import type { SessionEvent } from "@wakeloop/contracts";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeVersionWithBaseUrl } from "./agent-version-writer";

// Issue #8, point 1: the platform's provider keys never leave for a host a tenant chose, and a
// tenant's own key is write-only. A second fake model stands in for a tenant-chosen host and records
// the headers it receives.

const PLATFORM_COMPAT_KEY = "platform-compat-key-5f1e2d";
const TENANT_KEY = "sk-tenant-own-key-9c8b7a";

let platform: Platform;
let recorder: FakeModelServer;

beforeAll(async () => {
  recorder = await startFakeModelServer();
  platform = await Platform.start({
    workers: 1,
    // `localhost` may be reached (egress), but it is not a host the platform's keys may go to.
    env: { EGRESS_ALLOWED_HOSTS: "127.0.0.1,localhost" },
    workerEnv: { OPENAI_COMPATIBLE_API_KEY: PLATFORM_COMPAT_KEY },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await recorder?.close();
});

async function createAgent(model: Record<string, unknown>) {
  return platform.request("POST", "/v1/agents", { name: "keys", model });
}

const sessionErrors = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === "session.error" ? [event.error] : []));

describe("platform provider keys", () => {
  it("refuses a hosted provider's base_url on a host the operator did not list, naming the rule", async () => {
    for (const provider of ["anthropic", "openai"]) {
      const response = await createAgent({
        provider,
        id: "m",
        base_url: "https://collector.attacker.example/v1",
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toMatch(/MODEL_BASE_URL_ALLOWED_HOSTS/);
    }
  });

  it("never sends the platform's anthropic key to an unlisted host, even from an agent saved before the rule", async () => {
    const created = await createAgent(platform.fakeModel("anthropic"));
    expect(created.status).toBe(200);
    await storeVersionWithBaseUrl(platform.db, created.body.id, `http://localhost:${recorder.port}`);
    const before = recorder.requests.length;

    const { events } = await platform.runTurn(created.body.id);

    expect(recorder.requests.slice(before)).toEqual([]);
    expect(sessionErrors(events)).toEqual([
      expect.objectContaining({
        type: "model_invalid_request",
        message: expect.stringMatching(/base_url host localhost is refused for provider anthropic/),
      }),
    ]);
  });

  it("gives openai_compatible servers the platform key only on hosts the operator listed", async () => {
    const created = await createAgent({
      provider: "openai_compatible",
      id: "m",
      base_url: `${recorder.url}/v1`,
    });
    expect(created.status).toBe(200);
    const before = recorder.requests.length;

    await platform.runTurn(created.body.id);

    const received = recorder.requests.slice(before);
    expect(received.length).toBeGreaterThan(0);
    for (const request of received) expect(request.headers.authorization).not.toContain(PLATFORM_COMPAT_KEY);
  });
});

describe("tenant provider credentials", () => {
  it("are used for the tenant's requests and never come back out of the API, logs, events or spans", async () => {
    const put = await platform.request("PUT", "/v1/provider_credentials/openai_compatible", {
      api_key: TENANT_KEY,
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const created = await createAgent({
      provider: "openai_compatible",
      id: "m",
      base_url: `${recorder.url}/v1`,
    });
    const before = recorder.requests.length;

    const { id: sessionId, events } = await platform.runTurn(created.body.id);

    const received = recorder.requests.slice(before);
    expect(received.map((request) => request.headers.authorization)).toContain(`Bearer ${TENANT_KEY}`);

    const readable = [
      "/v1/provider_credentials",
      "/v1/agents",
      `/v1/agents/${created.body.id}`,
      `/v1/agents/${created.body.id}/versions`,
      `/v1/sessions/${sessionId}`,
      `/v1/sessions/${sessionId}/events`,
      `/v1/sessions/${sessionId}/pending`,
      `/v1/sessions/${sessionId}/tools`,
      `/v1/sessions/${sessionId}/trace`,
      "/v1/api_keys",
    ];
    for (const path of readable) {
      const response = await platform.request("GET", path);
      expect(response.status, path).toBe(200);
      expect(JSON.stringify(response.body), path).not.toContain(TENANT_KEY);
    }
    expect(JSON.stringify(events)).not.toContain(TENANT_KEY);
    const spans = await platform.db.selectFrom("spans").selectAll().execute();
    expect(JSON.stringify(spans)).not.toContain(TENANT_KEY);
    const stored = await platform.db.selectFrom("provider_credentials").selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.sealed.includes(Buffer.from(TENANT_KEY))).toBe(false);
    for (const [name, app] of platform.apps) {
      expect(JSON.stringify(app.records), name).not.toContain(TENANT_KEY);
      expect(app.stderr, name).not.toContain(TENANT_KEY);
    }
  });
});
