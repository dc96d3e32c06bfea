import type { SessionEvent } from "@wakeloop/contracts";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeVersionWithBaseUrl } from "./agent-version-writer";

// Issue #8, point 2: no server-side request forgery from workers. The platform allows 127.0.0.1 (its
// fake model) and nothing else internal; a second fake model on 127.0.0.1 is the internal service an
// attacker aims at through other names and spellings.

const LEAKED = "sk-live-LEAKED-0123456789abcdef";

let platform: Platform;
let internal: FakeModelServer;

beforeAll(async () => {
  internal = await startFakeModelServer();
  platform = await Platform.start({
    workers: 1,
    workerEnv: { MODEL_MAX_RETRIES: "1", MODEL_RETRY_BASE_MS: "20", MODEL_RETRY_MAX_MS: "50" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await internal?.close();
});

async function createAgent(model: Record<string, unknown>) {
  return platform.request("POST", "/v1/agents", { name: "egress", model });
}

const sessionErrors = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === "session.error" ? [event.error] : []));

describe("egress guard", () => {
  it("refuses a literal internal address in base_url when the agent is saved, in every spelling", async () => {
    for (const base_url of [
      "http://169.254.169.254/latest/meta-data",
      "http://2852039166/v1",
      "http://0xa9.0xfe.0xa9.0xfe/v1",
      "http://0177.0.0.2/v1",
      "http://[::ffff:127.0.0.2]/v1",
      "http://[fd00:ec2::254]/v1",
      "http://100.100.100.200/v1",
      "http://10.0.0.1/v1",
    ]) {
      const response = await createAgent({ provider: "openai_compatible", id: "m", base_url });
      expect(response.status, base_url).toBe(400);
      expect(response.body.error.message, base_url).toMatch(
        /addresses are reachable only for hosts on the operator's egress allowlist/,
      );
    }
  });

  it("resolves names at request time and refuses one that points at an internal address", async () => {
    const created = await createAgent({
      provider: "openai_compatible",
      id: "m",
      base_url: `http://localhost:${internal.port}/v1`,
    });
    expect(created.status).toBe(200);
    const before = internal.requests.length;

    const { events } = await platform.runTurn(created.body.id);

    expect(internal.requests.length).toBe(before);
    expect(sessionErrors(events)).toEqual([
      expect.objectContaining({
        type: "model_invalid_request",
        message: expect.stringMatching(/egress to localhost \(127\.0\.0\.1\) is refused: loopback/),
        retry_status: { type: "terminal" },
      }),
    ]);
  });

  it("checks a stored literal again at request time", async () => {
    const created = await createAgent(platform.fakeModel());
    await storeVersionWithBaseUrl(platform.db, created.body.id, `http://127.0.0.2:${internal.port}/v1`);

    const { events } = await platform.runTurn(created.body.id);

    expect(sessionErrors(events)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/egress to 127\.0\.0\.2 is refused/) }),
    ]);
  });

  it("keeps a provider's error body out of session.error: status and class only", async () => {
    const created = await createAgent(platform.fakeModel());
    platform.fake.enqueue(
      { error: { status: 500, type: "api_error", message: `upstream said ${LEAKED}` } },
      { error: { status: 400, type: "invalid_request_error", message: `bad key ${LEAKED}` } },
    );

    const { events } = await platform.runTurn(created.body.id);

    const errors = sessionErrors(events);
    expect(errors.map((error) => [error.type, error.retry_status.type])).toEqual([
      ["model_request_failed", "retrying"],
      ["model_invalid_request", "terminal"],
    ]);
    expect(errors.map((error) => error.message)).toEqual([
      "the provider answered 500: the request failed",
      "the provider answered 400: the provider refused the request",
    ]);
    expect(JSON.stringify(events)).not.toContain(LEAKED);
  });
});
