import { randomBytes } from "node:crypto";
import { ApiError, ProviderCredential, ProviderCredentialList } from "@wakeloop/contracts";
import { CredentialCipher, readProviderCredential } from "@wakeloop/provider-credentials";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayFixture, startGateway } from "../testing/gateway-fixture";

const keys = [{ id: "k1", key: randomBytes(32) }];
let gw: GatewayFixture;
let owner: string;
let member: string;

beforeAll(async () => {
  gw = await startGateway({ credentialKeys: keys });
  owner = gw.tenant.ownerKey;
  const minted = await gw.request("POST", "/v1/api_keys", {
    key: owner,
    body: { name: "m", role: "member" },
  });
  member = (minted.body as { key: string }).key;
});
afterAll(async () => {
  await gw?.close();
});

const SECRET = "sk-tenant-0123456789";

describe("provider credentials", () => {
  it("stores a key sealed, answers with metadata only, and the harness side can open it", async () => {
    const put = await gw.request("PUT", "/v1/provider_credentials/openai", {
      key: owner,
      body: { api_key: SECRET },
    });
    expect(put.status).toBe(200);
    expect(ProviderCredential.strict().parse(put.body).provider).toBe("openai");
    expect(JSON.stringify(put.body)).not.toContain(SECRET);

    const list = await gw.request("GET", "/v1/provider_credentials", { key: owner });
    expect(ProviderCredentialList.parse(list.body).data.map((c) => c.provider)).toEqual(["openai"]);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);

    const cipher = new CredentialCipher(keys);
    expect(await readProviderCredential(gw.db, cipher, gw.tenant.id, "openai")).toBe(SECRET);
  });

  it("is for owners only", async () => {
    for (const [method, path] of [
      ["PUT", "/v1/provider_credentials/openai"],
      ["GET", "/v1/provider_credentials"],
      ["DELETE", "/v1/provider_credentials/openai"],
    ] as const) {
      const response = await gw.request(method, path, {
        key: member,
        ...(method === "PUT" && { body: { api_key: "x" } }),
      });
      expect(response.status).toBe(403);
    }
  });

  it("refuses unknown providers and unknown or missing fields", async () => {
    const unknown = await gw.request("PUT", "/v1/provider_credentials/gemini", {
      key: owner,
      body: { api_key: "x" },
    });
    expect(unknown.status).toBe(400);
    for (const body of [{}, { api_key: "" }, { api_key: "x", extra: 1 }]) {
      const response = await gw.request("PUT", "/v1/provider_credentials/anthropic", { key: owner, body });
      expect(response.status).toBe(400);
    }
  });

  it("deletes, and a second delete is a 404", async () => {
    await gw.request("PUT", "/v1/provider_credentials/anthropic", { key: owner, body: { api_key: "a" } });
    const deleted = await gw.request("DELETE", "/v1/provider_credentials/anthropic", { key: owner });
    expect(ProviderCredential.parse(deleted.body).provider).toBe("anthropic");
    expect((await gw.request("DELETE", "/v1/provider_credentials/anthropic", { key: owner })).status).toBe(
      404,
    );
  });

  it("is a 400 naming the setting when the operator configured no key", async () => {
    const disabled = await startGateway({ credentialKeys: [] });
    try {
      const response = await disabled.request("PUT", "/v1/provider_credentials/openai", {
        key: disabled.tenant.ownerKey,
        body: { api_key: "x" },
      });
      expect(response.status).toBe(400);
      expect(ApiError.parse(response.body).error.message).toMatch(/PROVIDER_CREDENTIAL_KEYS/);
    } finally {
      await disabled.close();
    }
  });
});
