import {
  Agent,
  ApiError,
  MemoryEntry,
  MemoryStoreList,
  MemoryVersion,
  MemoryVersionList,
} from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;
let agentId: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
  const created = await gw.request("POST", "/v1/agents", { key, body: agentBody() });
  agentId = Agent.parse(created.body).id;
});
afterAll(async () => {
  await gw?.close();
});

const entryPath = (target: string, store = "workspace_memory") =>
  `/v1/agents/${agentId}/memory/${store}/entry?target=${encodeURIComponent(target)}`;

describe("agent memory API", () => {
  it("writes versions, reads, lists and audits them, authored by the API key", async () => {
    const first = await gw.request("PUT", entryPath("MEMORY.md"), {
      key,
      body: { content: "Use make ship." },
    });
    expect(first.status).toBe(200);
    const v1 = MemoryVersion.parse(first.body);
    expect(v1.author).toMatchObject({ kind: "api", session_id: null });
    const second = await gw.request("PUT", entryPath("MEMORY.md"), {
      key,
      body: { content: "Use make release.", expected_version_id: v1.id },
    });
    const v2 = MemoryVersion.parse(second.body);

    const entry = MemoryEntry.parse((await gw.request("GET", entryPath("MEMORY.md"), { key })).body);
    expect(entry).toMatchObject({ content: "Use make release.", version_id: v2.id });
    const stores = MemoryStoreList.parse(
      (await gw.request("GET", `/v1/agents/${agentId}/memory`, { key })).body,
    );
    expect(stores.data).toEqual([{ store: "workspace_memory", entries: 1, bytes: 17 }]);
    const versions = MemoryVersionList.parse(
      (
        await gw.request("GET", `/v1/agents/${agentId}/memory/workspace_memory/versions?target=MEMORY.md`, {
          key,
        })
      ).body,
    );
    expect(versions.data.map((version) => version.id)).toEqual([v2.id, v1.id]);
    const old = await gw.request("GET", `/v1/agents/${agentId}/memory-versions/${v1.id}`, { key });
    expect(MemoryVersion.parse(old.body).content).toBe("Use make ship.");
  });

  it("answers a stale expected version with a 409 and writes nothing", async () => {
    const first = MemoryVersion.parse(
      (await gw.request("PUT", entryPath("race"), { key, body: { content: "a" } })).body,
    );
    await gw.request("PUT", entryPath("race"), {
      key,
      body: { content: "b", expected_version_id: first.id },
    });
    const stale = await gw.request("PUT", entryPath("race"), {
      key,
      body: { content: "c", expected_version_id: first.id },
    });
    expect(stale.status).toBe(409);
    expect(ApiError.parse(stale.body).error.details).toMatchObject({ expected_version_id: first.id });
    expect(MemoryEntry.parse((await gw.request("GET", entryPath("race"), { key })).body).content).toBe("b");
  });

  it("refuses bad input and oversized entries, and deletes with history", async () => {
    expect(
      (await gw.request("PUT", entryPath("x", "Bad-Store"), { key, body: { content: "x" } })).status,
    ).toBe(400);
    expect((await gw.request("PUT", entryPath("x"), { key, body: { content: 1 } })).status).toBe(400);
    const big = await gw.request("PUT", entryPath("big"), { key, body: { content: "x".repeat(70_000) } });
    expect(big.status).toBe(413);
    expect((await gw.request("GET", entryPath("big"), { key })).status).toBe(404);
    const removed = await gw.request("DELETE", entryPath("race"), { key });
    expect(MemoryVersion.parse(removed.body).deleted).toBe(true);
    expect((await gw.request("GET", entryPath("race"), { key })).status).toBe(404);
  });

  it("hides the agent's memory from another tenant behind a 404", async () => {
    const other = await gw.newTenant("other");
    const response = await gw.request("GET", `/v1/agents/${agentId}/memory`, { key: other.ownerKey });
    expect(response.status).toBe(404);
    const write = await gw.request("PUT", entryPath("MEMORY.md"), {
      key: other.ownerKey,
      body: { content: "x" },
    });
    expect(write.status).toBe(404);
  });
});
