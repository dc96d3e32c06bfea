import { Agent, ApiError } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;

beforeAll(async () => {
  gw = await startGateway({
    models: {
      egress: { allowedHosts: ["127.0.0.1"] },
      baseUrlHosts: ["llm-proxy.corp.example"],
      compatibleKeyHosts: [],
    },
  });
  key = gw.tenant.ownerKey;
});
afterAll(async () => {
  await gw?.close();
});

const withModel = (model: Record<string, unknown>) => agentBody({ model: { id: "m", ...model } });

describe("saving an agent's model endpoint", () => {
  it("refuses a hosted provider's base_url on an unlisted host, naming the rule", async () => {
    const response = await gw.request("POST", "/v1/agents", {
      key,
      body: withModel({ provider: "anthropic", base_url: "https://collector.attacker.example" }),
    });
    expect(response.status).toBe(400);
    expect(ApiError.parse(response.body).error.message).toMatch(/MODEL_BASE_URL_ALLOWED_HOSTS/);
  });

  it("refuses a literal internal address in any spelling, on create and on update", async () => {
    for (const base_url of [
      "http://169.254.169.254/v1",
      "http://0xa9fea9fe/v1",
      "http://[::ffff:10.0.0.1]/v1",
    ]) {
      const response = await gw.request("POST", "/v1/agents", {
        key,
        body: withModel({ provider: "openai_compatible", base_url }),
      });
      expect(response.status).toBe(400);
      expect(ApiError.parse(response.body).error.message).toMatch(/egress allowlist/);
    }
    const created = await gw.request("POST", "/v1/agents", {
      key,
      body: withModel({ provider: "openai_compatible", base_url: "https://models.example/v1" }),
    });
    const agent = Agent.parse(created.body);
    const updated = await gw.request("POST", `/v1/agents/${agent.id}`, {
      key,
      body: { model: { provider: "openai_compatible", id: "m", base_url: "http://10.0.0.7/v1" } },
    });
    expect(updated.status).toBe(400);
    const latest = Agent.parse((await gw.request("GET", `/v1/agents/${agent.id}`, { key })).body);
    expect(latest.version).toBe(1);
  });

  it("accepts listed hosts, operator-allowed internal hosts and public compatible servers", async () => {
    for (const model of [
      { provider: "openai", base_url: "https://llm-proxy.corp.example/v1" },
      { provider: "anthropic" },
      { provider: "openai_compatible", base_url: "http://127.0.0.1:4010/v1" },
      { provider: "openai_compatible", base_url: "https://tenant-vllm.example/v1" },
    ]) {
      const response = await gw.request("POST", "/v1/agents", { key, body: withModel(model) });
      expect(response.status).toBe(200);
    }
  });
});
