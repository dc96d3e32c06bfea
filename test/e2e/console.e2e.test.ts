import { existsSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { createSession } from "@wakeloop/db";
import { Platform, startTcpProxy } from "@wakeloop/testing";
import { launchChromium } from "@wakeloop/testing/browser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The web console in Chromium against the whole platform: the gateway serves the built console at
// /console and the page talks to the public API only, as a person would use it.

const ROOT = join(import.meta.dirname, "..", "..");
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
// `WAKELOOP_SCREENSHOTS=1 npx vitest run test/e2e/console.e2e.test.ts` refreshes docs/console/*.png.
const SCREENSHOTS = process.env.WAKELOOP_SCREENSHOTS === "1" ? join(ROOT, "docs", "console") : null;

/** Waits for a page or API state; steps here wait on live streams and a worker, so longer than vitest's 1 s. */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });

let platform: Platform;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "apps", "console", "dist", "index.html"))) {
    throw new Error("the web console is not built: run `npm run build` (or `bash infra/setup.sh`)");
  }
  browser = await launchChromium();
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

/** A page of a fresh browser context (its own sessionStorage) at `viewport`, signed in with the key. */
async function signedIn(
  viewport = LAPTOP,
  baseUrl = platform.baseUrl,
  apiKey = platform.apiKey,
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  // A step that cannot happen fails with its locator, well before the test's own timeout.
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.accept());
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel("API key").fill(apiKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
  return page;
}

/** axe-core's WCAG 2 A/AA rules find nothing on the page as it is now. */
async function expectAccessible(page: Page): Promise<void> {
  const { violations, passes } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  expect(passes.length).toBeGreaterThan(10);
  expect(violations.map(({ id, nodes }) => `${id}: ${nodes.map((node) => node.target).join(", ")}`)).toEqual(
    [],
  );
}

/** Both widths of the page at `path`, full height, when screenshots are asked for. */
async function screenshots(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS === null) return;
  for (const [width, viewport] of [
    ["laptop", LAPTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(LAPTOP);
}

describe("web console", () => {
  it("refuses a wrong API key with the gateway's message and keeps no key", async () => {
    const page = await browser.newPage();
    await page.goto(`${platform.baseUrl}/console/sessions`);
    await page.getByLabel("API key").fill("wl_wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await poll(() => page.getByRole("alert").textContent()).toMatch(/401/);
    expect(await page.evaluate("window.sessionStorage.length")).toBe(0);
    await page.close();
  });

  it("is usable from the keyboard: sign in, the skip link, navigation", async () => {
    const context = await browser.newContext({ viewport: PHONE });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    await page.goto(`${platform.baseUrl}/console`);
    // The page's script renders the form after the load event: Tab only once it is there.
    await page.getByLabel("API key").waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.id")).toBe("api-key");
    await page.keyboard.type(platform.apiKey);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    // Past the skip link, the navigation: Sessions, then Agents, opened with Enter.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Agents");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/agents");
    await expectAccessible(page);
    await context.close();
  });

  it("signs the tab out, saying why, when its key is revoked", async () => {
    const created = await platform.request("POST", "/v1/api_keys", { name: "console-revoked" });
    expect(created.status).toBe(200);
    const page = await signedIn(LAPTOP, platform.baseUrl, created.body.key);
    expect(await page.evaluate("window.sessionStorage.length")).toBe(1);
    // The list's first requests must have answered: one still in flight when the key goes would sign the
    // tab out before the click below.
    await page.locator('table[aria-busy="false"]').waitFor();
    await page.waitForLoadState("networkidle");
    expect((await platform.request("DELETE", `/v1/api_keys/${created.body.id}`)).status).toBe(200);
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.getByText("The gateway no longer accepts that API key; sign in again.").waitFor();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate("window.sessionStorage.length")).toBe(0);
    await page.context().close();
  });

  it("runs a session: stream, approval, result, custom tool result, trace, tools, archive", async () => {
    const agentId = await platform.createAgent({
      tools: [
        { type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] },
        {
          type: "custom",
          name: "lookup_order",
          description: "Look up an order by id",
          input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        },
      ],
    });
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "color", value: "teal" } }] },
      { toolCalls: [{ name: "lookup_order", input: { id: "A-7" } }] },
      { text: "Order A-7 shipped; color stored." },
    );
    const page = await signedIn();

    // Start a session from the list page.
    await page.getByText("Start a session").click();
    const start = page.getByRole("form", { name: "Start a session" });
    await start.getByLabel("Agent").selectOption(agentId);
    await start.getByLabel("Title").fill("console run");
    await page.getByRole("button", { name: "Start session" }).click();
    await page.getByRole("heading", { name: "console run", level: 1 }).waitFor();
    const sessionId = page.url().split("/").at(-1) ?? "";

    // Send a message; the stream shows the tool call waiting on approval, with its input.
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("store teal and look up A-7");
    await page.getByRole("button", { name: "Send" }).click();
    const approval = page.getByRole("article", { name: "Approve set_state" });
    await approval.waitFor();
    expect(await approval.textContent()).toContain('"value": "teal"');
    await poll(() => page.getByTestId("session-status").textContent()).toBe("waiting on approval");

    // The list finds it under "waiting on approval"; back to the session from there.
    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    await page.getByLabel("Waiting on approval").check();
    await page.getByRole("link", { name: "console run" }).waitFor();
    await expectAccessible(page);
    await screenshots(page, "sessions");
    await page.getByRole("link", { name: "console run" }).click();
    await expectAccessible(page);
    await screenshots(page, "approval");

    await approval.getByRole("button", { name: "Allow" }).click();
    // The allowed call's result appears under the call in the live timeline.
    const call = page.locator('li[data-type="agent.tool_use"]');
    await call.getByText("Result", { exact: true }).waitFor();
    expect(await call.textContent()).toContain("set_state");

    // The custom tool is answered from the page.
    const custom = page.getByRole("article", { name: "Answer lookup_order" });
    await custom.waitFor();
    await custom.getByLabel("Result").fill("shipped on Monday");
    await custom.getByRole("button", { name: "Send result" }).click();
    await page.getByText("Order A-7 shipped; color stored.").waitFor();
    await poll(() => page.getByTestId("session-status").textContent()).toBe("idle (end_turn)");
    const modelRequests = platform.fake.requests.filter((request) => request.view);
    expect(JSON.stringify(modelRequests.at(-1)?.body)).toContain("shipped on Monday");

    // The trace waterfall shows the wakes' model and tool spans with tokens.
    const trace = page.getByRole("region", { name: "Trace" });
    await poll(async () => (await trace.getByRole("table").count()) >= 1).toBe(true);
    await poll(() => trace.textContent()).toMatch(/chat fake-gpt.*\d+ in \/ \d+ out/s);
    await poll(() => trace.textContent()).toContain("execute_tool set_state");

    // "Why is this tool missing": the exclusion the API gives, in the page.
    const tools = await platform.request("GET", `/v1/sessions/${sessionId}/tools`);
    const excluded = tools.body.excluded[0] as { tool: string; step: string };
    await page.getByLabel("Why is this tool missing?").fill(excluded.tool);
    await page.getByText(`Removed at step ${excluded.step}`).waitFor();
    await expectAccessible(page);
    await screenshots(page, "session");

    // Archive ends the session; the stream shows the termination.
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await poll(() => page.getByTestId("session-status").textContent()).toBe("terminated (archived)");
    await page.locator('li[data-type="session.status_terminated"]').waitFor();
    const session = await platform.request("GET", `/v1/sessions/${sessionId}`);
    expect(session.body).toMatchObject({ status: "terminated", termination_reason: "archived" });
    await page.context().close();
  });

  it("denies a call with a message that reaches the model as an error result", async () => {
    const agentId = await platform.createAgent({
      tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
    });
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "k", value: 2 } }] },
      { text: "Understood." },
    );
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId, title: "deny run" });
    const page = await signedIn(PHONE);
    await page.goto(`${platform.baseUrl}/console/sessions/${created.body.id}`);
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("store k");
    await page.getByRole("button", { name: "Send" }).click();
    const approval = page.getByRole("article", { name: "Approve set_state" });
    await approval.getByLabel("Message to the agent if denied").fill("not in prod");
    await approval.getByRole("button", { name: "Deny" }).click();
    await page.getByText("Understood.").waitFor();
    const call = page.locator('li[data-type="agent.tool_use"]');
    expect(await call.textContent()).toContain("Error result");
    expect(await call.textContent()).toContain("not in prod");
    await page.context().close();
  });

  it("interrupts a running turn from the page", async () => {
    const agentId = await platform.createAgent();
    platform.fake.enqueue({ text: "too slow", delayMs: 20_000 });
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId, title: "slow" });
    const page = await signedIn();
    await page.goto(`${platform.baseUrl}/console/sessions/${created.body.id}`);
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("take your time");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator('li[data-type="span.model_request_start"]').waitFor();
    await poll(() => page.getByTestId("session-status").textContent()).toBe("running");
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.locator('li[data-type="user.interrupt"]').waitFor();
    await poll(() => page.getByTestId("session-status").textContent()).toBe("idle (end_turn)");
    expect(await page.locator('li[data-type="agent.message"]').count()).toBe(0);
    await page.context().close();
  });

  it("shows the answer as the model writes it, then the stored message in its place", async () => {
    const agentId = await platform.createAgent();
    const answer = "Written word by word, the answer shows up on the page as it comes.";
    platform.fake.enqueue({ text: answer, chunkDelayMs: 300 });
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId, title: "live" });
    const page = await signedIn();
    await page.goto(`${platform.baseUrl}/console/sessions/${created.body.id}`);
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("write it");
    await page.getByRole("button", { name: "Send" }).click();
    const writing = page.locator('li[data-type="agent.message_delta"]');
    await writing.getByText("Written word").waitFor();
    // Still being written: the last words are not there, nor is a stored message.
    expect(await writing.textContent()).not.toContain("as it comes.");
    expect(await page.locator('li[data-type="agent.message"]').count()).toBe(0);
    await expectAccessible(page);
    await page.locator('li[data-type="agent.message"]').getByText(answer).waitFor();
    expect(await writing.count()).toBe(0);
    await page.context().close();
  });

  it("resumes the live timeline after the connection drops, missing and repeating nothing", async () => {
    const agentId = await platform.createAgent({});
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId, title: "flaky" });
    const id = created.body.id as string;
    const gateway = new URL(platform.baseUrl);
    const proxy = await startTcpProxy({ host: gateway.hostname, port: Number(gateway.port) });
    const proxied = `http://127.0.0.1:${proxy.port}`;
    const page = await signedIn(LAPTOP, proxied);
    const resumedFrom: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname.endsWith("/events/stream"))
        resumedFrom.push(request.headers()["last-event-id"] ?? "");
    });
    await page.goto(`${proxied}/console/sessions/${id}`);
    const timeline = page.getByRole("list", { name: "Session events, oldest first" });

    platform.fake.enqueue({ text: "first answer" }, { text: "second answer" });
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("one");
    await page.getByRole("button", { name: "Send" }).click();
    await timeline.getByText("first answer").waitFor();
    await poll(() => page.getByTestId("session-status").textContent()).toBe("idle (end_turn)");
    const seen = (await platform.events(id)).length;
    await timeline.getByText(`#${seen}`, { exact: true }).waitFor();

    proxy.drop();
    const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "two" }] }],
    });
    expect(sent.status).toBe(202);
    await timeline.getByText("second answer").waitFor();
    // The reconnect asked for what came after the last event shown, and the page holds each event once.
    expect(resumedFrom.slice(1).map(Number)[0]).toBe(seen);
    const seqs = (await timeline.locator(".seq").allTextContents()).map((text) => Number(text.slice(1)));
    const events = await platform.events(id);
    const shown = events.filter((event) => !event.type.endsWith("_result")).map((event) => event.seq);
    expect(seqs).toEqual(shown);
    await page.context().close();
    await proxy.cut();
  });

  it("shows the sub-session tree and lists a session's children", async () => {
    const agentId = await platform.createAgent();
    const parent = await platform.request("POST", "/v1/sessions", { agent: agentId, title: "parent" });
    // No public route spawns a sub-session (a tool does, from a wake): the rows are made as that would.
    const child = async (parentSessionId: string, title: string) =>
      (
        await createSession(platform.db, {
          tenantId: platform.tenantId,
          agentId,
          agentVersion: 1,
          environmentId: null,
          parentSessionId,
          title,
          metadata: {},
          budget: { max_total_tokens: null },
        })
      ).id;
    const childId = await child(parent.body.id, "child");
    await child(childId, "grandchild");
    const page = await signedIn();
    await page.goto(`${platform.baseUrl}/console/sessions/${parent.body.id}`);
    const tree = page.getByRole("list", { name: "Sub-session tree" });
    await tree.getByRole("link", { name: "child", exact: true }).waitFor();
    await tree.getByRole("link", { name: "grandchild" }).click();
    await page.getByRole("heading", { name: "grandchild", level: 1 }).waitFor();
    await page.getByRole("link", { name: childId }).click();
    await page.getByRole("heading", { name: "child", level: 1 }).waitFor();

    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    await page.getByLabel("Parent session id").fill(parent.body.id);
    await poll(async () =>
      page
        .getByRole("table")
        .getByRole("link", { name: /child|parent/ })
        .allTextContents(),
    ).toEqual(["child"]);
    await page.context().close();
  });

  it("creates an agent, saves a new version, diffs the versions and archives it", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByText("Create an agent").click();
    const spec = { name: "diffed", model: platform.fakeModel(), system: "First prompt." };
    await page.getByLabel("New agent (JSON)").fill("{ not json");
    await page.getByText(/not valid JSON/).waitFor();
    expect(await page.getByRole("button", { name: "Create agent" }).isDisabled()).toBe(true);
    await page.getByLabel("New agent (JSON)").fill(JSON.stringify({ ...spec, tools: [{ type: "nope" }] }));
    await page.getByRole("button", { name: "Create agent" }).click();
    // The gateway's validation error is shown and nothing was created.
    await page.getByRole("alert").waitFor();
    const before = await platform.request("GET", "/v1/agents?limit=200");
    expect(before.body.data.some((agent: { name: string }) => agent.name === "diffed")).toBe(false);

    await page.getByLabel("New agent (JSON)").fill(JSON.stringify(spec));
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.getByRole("heading", { name: "Agent diffed", level: 1 }).waitFor();

    const editor = page.getByLabel("Agent diffed (JSON)");
    const edited = (await editor.inputValue()).replace("First prompt.", "Second prompt.");
    await editor.fill(edited);
    await page.getByRole("button", { name: "Review changes" }).click();
    expect(await page.locator(".diff del").first().textContent()).toContain("First prompt.");
    await page.getByRole("button", { name: "Save new version" }).click();
    await page.getByText("Versions (2)").waitFor();
    const diff = page.getByRole("figure", { name: "v1 → v2" });
    expect(await diff.locator("del").textContent()).toContain("First prompt.");
    expect(await diff.locator("ins").textContent()).toContain("Second prompt.");
    await expectAccessible(page);
    await screenshots(page, "agent-diff");

    await page.getByRole("button", { name: "Archive agent" }).click();
    const agentId = page.url().split("/").at(-1) ?? "";
    await poll(async () => {
      const session = await platform.request("POST", "/v1/sessions", { agent: agentId });
      return session.body.error?.message ?? "";
    }).toContain("archived");
    await page.context().close();
  });

  it("creates, edits and archives an environment", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Environments" }).click();
    await page.getByText("Create an environment").click();
    await page
      .getByLabel("New environment (JSON)")
      .fill(JSON.stringify({ name: "console-env", config: { memory_mb: 256 } }));
    await page.getByRole("button", { name: "Create environment" }).click();
    await page.getByRole("heading", { name: "Environment console-env", level: 1 }).waitFor();
    const environmentId = page.url().split("/").at(-1) ?? "";
    const editor = page.getByLabel("Environment console-env (JSON)");
    await editor.fill((await editor.inputValue()).replace('"memory_mb": 256', '"memory_mb": 384'));
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await poll(
      async () => (await platform.request("GET", `/v1/environments/${environmentId}`)).body.config.memory_mb,
    ).toBe(384);
    await page.getByRole("button", { name: "Archive environment" }).click();
    await poll(async () => {
      const listed = await platform.request("GET", "/v1/environments?limit=200");
      return listed.body.data.some((environment: { id: string }) => environment.id === environmentId);
    }).toBe(false);
    await page.context().close();
  });
});

describe("web console with a sandbox", () => {
  let sandboxed: Platform;

  beforeAll(async () => {
    sandboxed = await Platform.start({ workers: 1, sandbox: true });
  }, 180_000);

  afterAll(async () => {
    await sandboxed?.stop();
  });

  it("shows an exec-policy ask with its command before it runs, then its output", async () => {
    const environment = await sandboxed.request("POST", "/v1/environments", {
      name: "console sandbox",
      config: { memory_mb: 256, pids_limit: 128, exec_security: "allowlist", exec_allowlist: ["echo"] },
    });
    expect(environment.status, JSON.stringify(environment.body)).toBe(200);
    const agentId = await sandboxed.createAgent({
      tools: [{ type: "builtin", configs: [{ name: "shell_exec", permission_policy: "always_allow" }] }],
    });
    const created = await sandboxed.request("POST", "/v1/sessions", {
      agent: agentId,
      environment_id: environment.body.id,
      title: "sandboxed",
    });
    sandboxed.fake.enqueue(
      { toolCalls: [{ name: "shell_exec", input: { command: "touch asked.txt && echo touched" } }] },
      { text: "Touched after approval." },
    );
    const page = await signedIn(LAPTOP, sandboxed.baseUrl, sandboxed.apiKey);
    await page.goto(`${sandboxed.baseUrl}/console/sessions/${created.body.id}`);
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("touch it");
    await page.getByRole("button", { name: "Send" }).click();

    // The command the exec policy asked about, and why, shown with the tool input before anything ran.
    const approval = page.getByRole("article", { name: "Approve shell_exec" });
    await approval.waitFor({ timeout: 60_000 });
    const text = await approval.textContent();
    expect(text).toContain("Commandtouch asked.txt && echo touched");
    expect(text).toContain("Why asked");
    expect(text).toContain('"command": "touch asked.txt && echo touched"');
    await expectAccessible(page);
    await screenshots(page, "exec-approval");
    await approval.getByRole("button", { name: "Allow" }).click();
    await page.getByText("Touched after approval.").waitFor({ timeout: 60_000 });
    const call = page.locator('li[data-type="agent.tool_use"]');
    expect(await call.locator(".tool-result").textContent()).toContain("touched");
    await page.context().close();
  }, 180_000);
});
