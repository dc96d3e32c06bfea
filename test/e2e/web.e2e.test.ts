import type { SessionEvent } from "@wakeloop/contracts";
import { FIXTURE_ARTICLE, Platform, startWebFixture, toolResults, type WebFixture } from "@wakeloop/testing";
import { EffectiveToolSet } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #12, web part, through the running services: the worker fetches a page the test serves (its
// host explicitly on the web egress allowlist), refuses a private target and a redirect to one, and
// searches a local SearXNG-compatible backend; every call is planned, recorded and explained.

let web: WebFixture;
let platform: Platform;

beforeAll(async () => {
  web = await startWebFixture();
  platform = await Platform.start({
    workers: 1,
    // Both the gateway (/tools) and the worker must know the search backend is there.
    env: { WEB_SEARCH_URL: web.searchUrl },
    workerEnv: { WEB_FETCH_ALLOWED_HOSTS: "127.0.0.1", WEB_FETCH_MAX_CHARS: "5000" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await web?.close();
});

async function session(agentFields: Record<string, unknown> = {}): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", {
    name: "reader",
    model: platform.fakeModel(),
    ...agentFields,
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const created = await platform.request("POST", "/v1/sessions", { agent: agent.body.id });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function turn(sessionId: string, text: string, stop = "end_turn"): Promise<SessionEvent[]> {
  const before = (await platform.events(sessionId)).at(-1)?.seq ?? 0;
  const sent = await platform.request("POST", `/v1/sessions/${sessionId}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  await platform.waitForIdle(sessionId, stop, before, 60_000);
  return (await platform.events(sessionId)).filter((event) => event.seq > before);
}

describe("web tools through the services", () => {
  it("fetches an allowlisted page as markdown and refuses a private target and a redirect to one", async () => {
    const id = await session();
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "web_fetch", input: { url: `${web.origin}/article` } },
          { name: "web_fetch", input: { url: `${web.origin}/data.json` } },
          { name: "web_fetch", input: { url: `${web.privateOrigin}/article` } },
          { name: "web_fetch", input: { url: `${web.origin}/redirect-private` } },
          { name: "web_fetch", input: { url: "http://169.254.169.254/latest/meta-data/" } },
          { name: "web_fetch", input: { url: `${web.origin}/image.png` } },
        ],
      },
      { text: "read it" },
    );
    const events = await turn(id, "read the article");
    const [article, data, privateTarget, redirected, metadata, image] = toolResults(events);
    expect(article).toMatchObject({
      name: "web_fetch",
      isError: false,
      value: { status: 200, title: FIXTURE_ARTICLE.title, content_type: "text/html", truncated: false },
    });
    expect(article?.value.content).toContain(`## ${FIXTURE_ARTICLE.heading}`);
    expect(article?.value.content).toContain(FIXTURE_ARTICLE.sentence);
    expect(data).toMatchObject({
      name: "web_fetch",
      isError: false,
      value: { content: '{"answer":42,"items":[1,2]}' },
    });
    expect(privateTarget).toMatchObject({ isError: true });
    expect(privateTarget?.value).toContain("egress to 127.0.0.2 is refused: loopback addresses");
    expect(redirected).toMatchObject({ isError: true });
    expect(redirected?.value).toContain("egress to 127.0.0.2 is refused");
    expect(metadata?.value).toContain("linkLocal");
    expect(image?.value).toContain("binary content (image/png)");

    // The ledger recorded each call with its outcome.
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select(["name", "status"])
      .where("session_id", "=", id)
      .orderBy("created_at")
      .execute();
    expect(ledger.map((row) => row.status).sort()).toEqual(
      ["failed", "failed", "failed", "failed", "succeeded", "succeeded"].sort(),
    );
  });

  it("searches the operator's backend and reads a result", async () => {
    const id = await session();
    const tools = EffectiveToolSet.parse((await platform.request("GET", `/v1/sessions/${id}/tools`)).body);
    expect(tools.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["web_fetch", "web_read", "web_search"]),
    );
    expect(tools.excluded).toContainEqual(
      expect.objectContaining({ tool: "fetch_url", rule: "alias_of:web_fetch" }),
    );
    platform.fake.enqueue(
      { toolCalls: [{ name: "web_search", input: { query: "bounded wakes", count: 2 } }] },
      { toolCalls: [{ name: "web_read", input: { url: `${web.origin}/article`, max_chars: 200 } }] },
      { text: "found it" },
    );
    const [search, read] = toolResults(await turn(id, "search for bounded wakes"));
    expect(web.queries).toContain("bounded wakes");
    expect(search).toMatchObject({
      name: "web_search",
      isError: false,
      value: {
        query: "bounded wakes",
        results: [
          { url: `${web.origin}/article`, snippet: FIXTURE_ARTICLE.sentence },
          { url: `${web.origin}/data.json` },
        ],
      },
    });
    expect(read).toMatchObject({ name: "web_read", isError: false, value: { truncated: true } });
    expect(read?.value.content).toMatch(/\[truncated: showing the first 200 of \d+ characters\]$/);
  });

  it("goes through the policy pipeline: always_ask pauses for a person, deny removes the tool", async () => {
    const asking = await session({
      tools: [{ type: "builtin", configs: [{ name: "web_fetch", permission_policy: "always_ask" }] }],
    });
    platform.fake.enqueue({ toolCalls: [{ name: "web_fetch", input: { url: `${web.origin}/notes.txt` } }] });
    const paused = await turn(asking, "fetch the notes", "requires_action");
    const use = paused.find((event) => event.type === "agent.tool_use");
    expect(use).toMatchObject({ name: "web_fetch", evaluated_permission: "ask" });

    // With web_fetch denied, its personal-agent name is offered instead and runs the same tool.
    const aliasOnly = await session({ tool_policy: { deny: ["web_fetch"] } });
    platform.fake.enqueue(
      { toolCalls: [{ name: "fetch_url", input: { url: `${web.origin}/notes.txt` } }] },
      { text: "done" },
    );
    expect(toolResults(await turn(aliasOnly, "fetch the notes"))).toEqual([
      expect.objectContaining({
        name: "fetch_url",
        isError: false,
        value: expect.objectContaining({ content: "plain notes\nsecond line" }),
      }),
    ]);

    const denied = await session({ tool_policy: { deny: ["group:web"] } });
    const set = EffectiveToolSet.parse((await platform.request("GET", `/v1/sessions/${denied}/tools`)).body);
    expect(set.tools.map((tool) => tool.name)).not.toContain("web_fetch");
    expect(set.excluded).toContainEqual(expect.objectContaining({ tool: "web_search", step: "agent" }));
  });

  it("an interrupt cancels a fetch that is still waiting on its page", async () => {
    const id = await session();
    platform.fake.enqueue({
      toolCalls: [{ name: "web_fetch", input: { url: `${web.origin}/slow?ms=30000` } }],
    });
    const before = (await platform.events(id)).at(-1)?.seq ?? 0;
    await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "fetch the slow page" }] }],
    });
    await platform.waitForEvent(id, (event) => event.type === "agent.tool_use" && event.seq > before);
    const started = Date.now();
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [{ type: "user.interrupt" }] });
    await platform.waitForIdle(id, "end_turn", before, 15_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    const [cancelled] = toolResults((await platform.events(id)).filter((event) => event.seq > before));
    expect(cancelled).toMatchObject({ name: "web_fetch", isError: true });
    expect(cancelled?.value).toContain("cancelled by an interrupt");
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select("status")
      .where("session_id", "=", id)
      .execute();
    expect(ledger).toEqual([{ status: "cancelled" }]);
  });
});
