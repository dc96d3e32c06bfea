import {
  Agent,
  ApiError,
  SubstrateChangedNotice,
  SubstrateFileList,
  SubstrateVersion,
  SubstrateVersionList,
  SubstrateVersionWithContent,
} from "@wakeloop/contracts";
import { type SubstrateWriteResult, writeSubstrateFile } from "@wakeloop/db";
import { substrateChangedSubject } from "@wakeloop/sandbox-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;
let agentId: string;
let v1: SubstrateWriteResult;
let v2: SubstrateWriteResult;
const notices: SubstrateChangedNotice[] = [];

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
  agentId = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body).id;
  // Versions as the agent's promotions write them (the runner's tools; see the sandbox-runner tests).
  const scope = { tenantId: gw.tenant.id, agentId };
  const author = (id: string) => ({
    kind: "tool" as const,
    session_id: null,
    wake_id: null,
    tool_call_id: id,
  });
  const limits = { maxFileBytes: 1_024, maxAgentBytes: 4_096 };
  v1 = await writeSubstrateFile(
    gw.db,
    scope,
    { path: "docs/guide.md", content: "one", author: author("t1") },
    limits,
  );
  v2 = await writeSubstrateFile(
    gw.db,
    scope,
    { path: "docs/guide.md", content: "two", author: author("t2") },
    limits,
  );
  gw.bus.nc.subscribe(substrateChangedSubject(gw.bus.subjects.prefix), {
    callback: (_, message) => {
      notices.push(SubstrateChangedNotice.parse(message.json()));
    },
  });
});
afterAll(async () => {
  await gw?.close();
});

const versionsPath = (path: string) =>
  `/v1/agents/${agentId}/resources/versions?path=${encodeURIComponent(path)}`;

describe("agent resources API", () => {
  it("lists files, their versions and one version's content", async () => {
    const files = SubstrateFileList.parse(
      (await gw.request("GET", `/v1/agents/${agentId}/resources`, { key })).body,
    );
    expect(files).toMatchObject({
      data: [{ path: "docs/guide.md", version_id: v2.version.id, size_bytes: 3 }],
      total_bytes: 3,
      max_agent_bytes: 16 * 1024 * 1024,
    });
    const versions = SubstrateVersionList.parse(
      (await gw.request("GET", versionsPath("docs/guide.md"), { key })).body,
    );
    expect(versions.data.map((version) => version.id)).toEqual([v2.version.id, v1.version.id]);
    const old = await gw.request("GET", `/v1/agents/${agentId}/resources/versions/${v1.version.id}`, { key });
    expect(SubstrateVersionWithContent.parse(old.body)).toMatchObject({
      content: "one",
      author: { tool_call_id: "t1" },
    });
  });

  it("restores an old version as a new one authored by the API key, and tells the runners", async () => {
    const stale = await gw.request("POST", `/v1/agents/${agentId}/resources/restore`, {
      key,
      body: { version_id: v1.version.id, expected_version_id: v1.version.id },
    });
    expect(stale.status).toBe(409);
    expect(ApiError.parse(stale.body).error.details).toMatchObject({ latest_version_id: v2.version.id });

    const restored = await gw.request("POST", `/v1/agents/${agentId}/resources/restore`, {
      key,
      body: { version_id: v1.version.id, expected_version_id: v2.version.id },
    });
    expect(restored.status).toBe(200);
    expect(SubstrateVersion.parse(restored.body)).toMatchObject({
      path: "docs/guide.md",
      restored_from_version_id: v1.version.id,
      author: { kind: "api", session_id: null },
    });
    await expect.poll(() => notices).toEqual([{ tenant_id: gw.tenant.id, agent_id: agentId }]);
  });

  it("refuses bad input with a 400 and unknown versions with a 404", async () => {
    expect((await gw.request("GET", versionsPath("../etc/passwd"), { key })).status).toBe(400);
    expect((await gw.request("GET", `/v1/agents/${agentId}/resources/versions`, { key })).status).toBe(400);
    expect(
      (await gw.request("POST", `/v1/agents/${agentId}/resources/restore`, { key, body: { version: 1 } }))
        .status,
    ).toBe(400);
    expect(
      (await gw.request("GET", `/v1/agents/${agentId}/resources/versions/subv_missing`, { key })).status,
    ).toBe(404);
    const missing = await gw.request("POST", `/v1/agents/${agentId}/resources/restore`, {
      key,
      body: { version_id: "subv_missing" },
    });
    expect(missing.status).toBe(404);
  });

  it("hides the agent's resources from another tenant behind a 404", async () => {
    const other = await gw.newTenant("other");
    for (const path of [
      `/v1/agents/${agentId}/resources`,
      versionsPath("docs/guide.md"),
      `/v1/agents/${agentId}/resources/versions/${v1.version.id}`,
    ]) {
      expect((await gw.request("GET", path, { key: other.ownerKey })).status).toBe(404);
    }
    const restore = await gw.request("POST", `/v1/agents/${agentId}/resources/restore`, {
      key: other.ownerKey,
      body: { version_id: v1.version.id },
    });
    expect(restore.status).toBe(404);
  });
});
