import type { SessionEvent } from "@wakeloop/contracts";
import { BROWSER_SANDBOX_IMAGE, Platform, requireBrowserImage } from "@wakeloop/testing";
import { EffectiveToolSet } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The browser tools through the public API: every service its own process, the sandbox-runner with
// real containers of the browser image, the fake model scripting the calls. The sandbox has no network
// (the default), so the test's page is served inside it, on its own loopback, by a python http.server
// the session starts like a model would; the browser in the same sandbox reaches it there.

const PAGE = `<!doctype html>
<html><head><title>Browser e2e</title></head>
<body>
  <h1>Hello, browser</h1>
  <p id="status">waiting</p>
  <input id="name">
  <button id="go" onclick="document.getElementById('status').textContent = 'hi ' + document.getElementById('name').value">Go</button>
</body></html>`;
const SITE = "http://127.0.0.1:8766";

let platform: Platform;

beforeAll(async () => {
  await requireBrowserImage();
  platform = await Platform.start({ workers: 1, sandbox: true });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const created = await platform.request("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

/** A session of an agent whose shell_run runs unasked (it serves the page), on `image`. */
async function session(image: string): Promise<string> {
  const environment = await create("/v1/environments", {
    name: "e2e browser",
    config: { image, memory_mb: 1_024, pids_limit: 512 },
  });
  const agent = await create("/v1/agents", {
    name: "e2e browser",
    model: platform.fakeModel(),
    tools: [{ type: "builtin", configs: [{ name: "shell_run", permission_policy: "always_allow" }] }],
  });
  return create("/v1/sessions", { agent, environment_id: environment });
}

async function turn(id: string, text: string, timeoutMs = 120_000): Promise<SessionEvent[]> {
  const before = (await platform.events(id)).at(-1)?.seq ?? 0;
  const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  await platform.waitForIdle(id, "end_turn", before, timeoutMs);
  return (await platform.events(id)).filter((event) => event.seq > before);
}

type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;

/** Each call of the turn with its result, in the model's order. */
function calls(events: SessionEvent[]) {
  return events.flatMap((event) => {
    if (event.type !== "agent.tool_use") return [];
    const result = events.find(
      (other): other is ToolResult => other.type === "agent.tool_result" && other.tool_use_id === event.id,
    );
    const text = result?.content.map((block) => (block.type === "text" ? block.text : "")).join("") ?? "";
    return [{ name: event.name, permission: event.evaluated_permission, result, text }];
  });
}

const serve = [
  { toolCalls: [{ name: "write", input: { path: "site/index.html", content: PAGE } }] },
  {
    toolCalls: [
      {
        name: "shell_run",
        input: {
          command: "python3 -m http.server 8766 --bind 127.0.0.1 --directory /workspace/site",
          background: true,
        },
      },
    ],
  },
  {
    toolCalls: [
      {
        name: "shell_run",
        input: {
          command: `for i in $(seq 1 100); do python3 -c "import urllib.request; urllib.request.urlopen('${SITE}/')" 2>/dev/null && exit 0; sleep 0.1; done; exit 1`,
        },
      },
    ],
  },
];

describe("browser tools through the services", () => {
  it("navigate, extract, type, click, screenshot (an image block the model receives), evaluate, close", async () => {
    const id = await session(BROWSER_SANDBOX_IMAGE);
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      ...serve,
      { toolCalls: [{ name: "browser_navigate", input: { url: `${SITE}/` } }] },
      { toolCalls: [{ name: "browser_extract_text", input: {} }] },
      { toolCalls: [{ name: "browser_type", input: { selector: "#name", text: "Ada" } }] },
      { toolCalls: [{ name: "browser_click", input: { selector: "#go" } }] },
      { toolCalls: [{ name: "browser_extract_text", input: { selector: "#status" } }] },
      { toolCalls: [{ name: "browser_screenshot", input: {} }] },
      { toolCalls: [{ name: "browser_evaluate", input: { code: "document.title.length" } }] },
      { toolCalls: [{ name: "browser_close", input: {} }] },
      { text: "Done browsing." },
    );
    const events = await turn(id, "browse the page");
    const made = calls(events);
    expect(made.map((call) => call.name)).toEqual([
      "write",
      "shell_run",
      "shell_run",
      "browser_navigate",
      "browser_extract_text",
      "browser_type",
      "browser_click",
      "browser_extract_text",
      "browser_screenshot",
      "browser_evaluate",
      "browser_close",
    ]);
    for (const call of made) expect(call.result?.is_error, `${call.name}: ${call.text}`).toBe(false);
    const browser = made.slice(3);
    expect(browser.every((call) => call.permission === "allow")).toBe(true);
    expect(JSON.parse(browser[0]?.text ?? "")).toEqual({
      url: `${SITE}/`,
      title: "Browser e2e",
      status: 200,
    });
    expect(browser[1]?.text).toContain("Hello, browser");
    expect(browser[4]?.text).toBe("hi Ada");
    expect(JSON.parse(browser[6]?.text ?? "")).toEqual({ result: 11 });
    expect(JSON.parse(browser[7]?.text ?? "")).toEqual({ ok: true, closed: true });

    // The screenshot is an image content block of the tool result, and the model's next request has it.
    const image = browser[5]?.result?.content.find((block) => block.type === "image");
    expect(image).toMatchObject({ type: "image", source: { type: "base64", media_type: "image/png" } });
    const data = image?.type === "image" && image.source.type === "base64" ? image.source.data : "";
    expect(Buffer.from(data, "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
    const sent = platform.fake.requests.slice(before).map((request) => JSON.stringify(request.body));
    expect(sent.some((body) => body.includes(data.slice(0, 200)))).toBe(true);

    // Every call is in the ledger with its outcome.
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select(["name", "status"])
      .where("session_id", "=", id)
      .where("name", "like", "browser_%")
      .orderBy("created_at")
      .execute();
    expect(ledger.map((row) => row.status)).toEqual(Array(8).fill("succeeded"));
  }, 240_000);

  it("an interrupt stops a script that never ends; the browser answers the next turn", async () => {
    const id = await session(BROWSER_SANDBOX_IMAGE);
    platform.fake.enqueue({ toolCalls: [{ name: "browser_evaluate", input: { code: "while (true) {}" } }] });
    const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "spin" }] }],
    });
    expect(sent.status).toBe(202);
    await platform.waitForEvent(id, (event) => event.type === "agent.tool_use", 120_000);
    // Long enough for the browser to start and the script to be running in the page.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [{ type: "user.interrupt" }] });
    await platform.waitForIdle(id, "end_turn", 0, 30_000);
    const [spun] = calls(await platform.events(id));
    expect(spun).toMatchObject({ name: "browser_evaluate", result: { is_error: true } });

    platform.fake.enqueue(
      { toolCalls: [{ name: "browser_evaluate", input: { code: "1 + 1" } }] },
      { text: "It answers." },
    );
    const [again] = calls(await turn(id, "try again"));
    expect(again?.result?.is_error, again?.text).toBe(false);
    expect(JSON.parse(again?.text ?? "")).toEqual({ result: 2 });
  }, 240_000);

  it("a session whose environment has no browser image is not offered the browser tools, and /tools says why", async () => {
    const id = await session("wakeloop-sandbox:bookworm");
    platform.fake.enqueue({ toolCalls: [{ name: "ls", input: {} }] }, { text: "listed" });
    await turn(id, "make the sandbox ready");
    const set = EffectiveToolSet.parse((await platform.request("GET", `/v1/sessions/${id}/tools`)).body);
    expect(set.tools.map((tool) => tool.name)).toContain("ls");
    expect(set.tools.map((tool) => tool.name)).not.toContain("browser_navigate");
    expect(set.excluded).toContainEqual(
      expect.objectContaining({
        tool: "browser_navigate",
        step: "runtime_gating",
        rule: "availability:sandbox.browser",
        reason: expect.stringContaining("wakeloop-sandbox:bookworm has no browser"),
      }),
    );
    const withBrowser = await session(BROWSER_SANDBOX_IMAGE);
    platform.fake.enqueue({ toolCalls: [{ name: "ls", input: {} }] }, { text: "listed" });
    await turn(withBrowser, "make the sandbox ready");
    const offered = EffectiveToolSet.parse(
      (await platform.request("GET", `/v1/sessions/${withBrowser}/tools`)).body,
    );
    expect(offered.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["browser_navigate", "browser_screenshot", "browser_evaluate", "browser_close"]),
    );
  }, 240_000);
});
