import { randomBytes } from "node:crypto";
import type { ModelConfig } from "@wakeloop/contracts";
import { createGuardedFetch } from "@wakeloop/egress";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { CredentialCipher, putProviderCredential } from "@wakeloop/provider-credentials";
import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelClients, modelClients } from "./model-clients";

let database: TestDatabase;
let fake: FakeModelServer;
let clients: ModelClients;
const cipher = new CredentialCipher([{ id: "k1", key: randomBytes(32) }]);

beforeAll(async () => {
  database = await createTestDatabase();
  fake = await startFakeModelServer();
  await database.db
    .insertInto("tenants")
    .values([
      { id: "tnt_own", name: "own key" },
      { id: "tnt_none", name: "no key" },
    ])
    .execute();
  await putProviderCredential(
    database.db,
    cipher,
    { tenantId: "tnt_own", provider: "openai_compatible", apiKey: "tenant-own-key" },
    new Date(),
  );
  const egress = { allowedHosts: ["127.0.0.1"] };
  clients = modelClients({
    db: database.db,
    policy: { egress, baseUrlHosts: [], compatibleKeyHosts: [] },
    platformKeys: { openai_compatible: "platform-key", anthropic: "platform-anthropic-key" },
    credentials: cipher,
    fetch: createGuardedFetch({
      policy: egress,
      maxResponseBytes: 1_000_000,
      timeoutMs: 10_000,
      followRedirects: false,
    }),
    timeoutMs: 10_000,
    maxClients: 2,
  });
});
afterAll(async () => {
  await fake?.close();
  await database?.drop();
});

const request = {
  model: "m",
  system: "",
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
  tools: [],
  maxOutputTokens: 10,
};

describe("modelClients", () => {
  it("gives each tenant its own key and never another tenant's cached client", async () => {
    const model: ModelConfig = {
      provider: "openai_compatible",
      id: "m",
      base_url: `${fake.url}/v1`,
      max_output_tokens: 10,
      context_window_tokens: 1_000,
    };
    await (await clients("tnt_own", model)).complete(request);
    await (await clients("tnt_none", model)).complete(request);
    expect(fake.requests.map((seen) => seen.headers.authorization)).toEqual([
      "Bearer tenant-own-key",
      // Not a listed host: no platform key, only the placeholder the SDK insists on.
      "Bearer unused",
    ]);
  });

  it("refuses before any request when the endpoint breaks the rules", async () => {
    const model: ModelConfig = {
      provider: "anthropic",
      id: "m",
      base_url: `${fake.url}`,
      max_output_tokens: 10,
      context_window_tokens: 1_000,
    };
    const before = fake.requests.length;
    await expect(clients("tnt_none", model)).rejects.toMatchObject({ code: "model_base_url_refused" });
    expect(fake.requests).toHaveLength(before);
  });

  it("keeps a bounded number of clients, dropping the least recently used (issue #30 point 7)", async () => {
    // Tenants choose base URLs: each new one is a new client, and a worker lives for many of them.
    const at = (path: string): ModelConfig => ({
      provider: "openai_compatible",
      id: "m",
      base_url: `${fake.url}/${path}/v1`,
      max_output_tokens: 10,
      context_window_tokens: 1_000,
    });
    const first = await clients("tnt_none", at("a"));
    const second = await clients("tnt_none", at("b"));
    expect(await clients("tnt_none", at("a"))).toBe(first);
    // A third client pushes out the one used longest ago (b), not the one just reused (a).
    await clients("tnt_none", at("c"));
    expect(await clients("tnt_none", at("a"))).toBe(first);
    expect(await clients("tnt_none", at("b"))).not.toBe(second);
  });
});
