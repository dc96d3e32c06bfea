import { BROWSER_SANDBOX_IMAGE, requireBrowserImage } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// The browser tools against Chromium in a real hardened container of the browser image. The sandbox
// has no network (the default), so the test's page is served inside it, on its own loopback, by a
// python http.server the session starts like a model would.

const PAGE = `<!doctype html>
<html><head><title>Wakeloop test page</title></head>
<body>
  <h1 id="heading">Hello from the sandbox</h1>
  <p id="status">waiting</p>
  <button id="go" onclick="document.getElementById('status').textContent = 'clicked ' + document.getElementById('name').value">Go</button>
  <input id="name" value="old">
  <a id="next" href="/second.html">next</a>
</body></html>`;
const SECOND = `<!doctype html><html><head><title>Second</title></head><body><p>second page</p></body></html>`;
const SITE = "http://127.0.0.1:8765";

let fixture: RunnerFixture;
let s: SessionDriver;

beforeAll(async () => {
  await requireBrowserImage();
  fixture = await RunnerFixture.create();
  s = new SessionDriver(
    await fixture.manager(),
    undefined,
    testEnvironment({ image: BROWSER_SANDBOX_IMAGE, memory_mb: 1_024, pids_limit: 512 }),
  );
  await s.ensure();
  await s.run("write", { path: "site/index.html", content: PAGE });
  await s.run("write", { path: "site/second.html", content: SECOND });
  await s.run("shell_run", {
    command: "python3 -m http.server 8765 --bind 127.0.0.1 --directory /workspace/site",
    background: true,
  });
  // The server is up once a fetch from inside the sandbox answers.
  const probe = await s.run("shell_run", {
    command: `for i in $(seq 1 100); do python3 -c "import urllib.request; urllib.request.urlopen('${SITE}/')" 2>/dev/null && exit 0; sleep 0.1; done; exit 1`,
  });
  expect(probe.text).toContain("exit code 0");
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
});

describe("browser tools", () => {
  it("navigate starts Chromium in the sandbox and returns url, title and status", async () => {
    const result = await s.run("browser_navigate", { url: `${SITE}/` });
    expect(result.is_error, result.text).toBe(false);
    expect(result.result).toEqual({ url: `${SITE}/`, title: "Wakeloop test page", status: 200 });
  }, 60_000);

  it("extracts text and HTML, whole page or by selector", async () => {
    const text = await s.run("browser_extract_text", {});
    expect(text.text).toContain("Hello from the sandbox");
    expect(text.text).toContain("waiting");
    expect((await s.run("browser_extract_text", { selector: "#heading" })).text).toBe(
      "Hello from the sandbox",
    );
    expect((await s.run("browser_extract_html", { selector: "#status" })).text).toBe("waiting");
    expect((await s.run("browser_extract_html", { selector: "#status", outer: true })).text).toBe(
      '<p id="status">waiting</p>',
    );
  });

  it("types into a field, clicks a button that changes the page, and evaluates in the page", async () => {
    expect(
      (await s.run("browser_type", { selector: "#name", text: "Ada", clear_first: true })).is_error,
    ).toBe(false);
    expect((await s.run("browser_type", { selector: "#name", text: " L." })).is_error).toBe(false);
    const click = await s.run("browser_click", { selector: "#go" });
    expect(click.result).toMatchObject({ ok: true, title: "Wakeloop test page" });
    expect((await s.run("browser_extract_text", { selector: "#status" })).text).toBe("clicked Ada L.");
    const evaluated = await s.run("browser_evaluate", {
      code: "() => ({ value: document.querySelector('#name').value, links: document.links.length })",
    });
    expect(JSON.parse(evaluated.text)).toEqual({ result: { value: "Ada L.", links: 1 } });
    expect(JSON.parse((await s.run("browser_evaluate", { code: "6 * 7" })).text)).toEqual({ result: 42 });
  });

  it("a click on a link navigates", async () => {
    const click = await s.run("browser_click", { selector: "#next" });
    expect(click.result).toMatchObject({ ok: true, url: `${SITE}/second.html`, title: "Second" });
  });

  it("returns a screenshot as a PNG image block", async () => {
    const shot = await s.call("browser_screenshot", {});
    if (shot.outcome !== "completed") throw new Error("screenshot needs approval");
    expect(shot.is_error).toBe(false);
    expect(shot.result).toMatchObject({ width: 1280, height: 720, media_type: "image/png" });
    const image = shot.content.find((block) => block.type === "image");
    if (image?.type !== "image" || image.source.type !== "base64") throw new Error("no base64 image block");
    expect(image.source.media_type).toBe("image/png");
    expect(Buffer.from(image.source.data, "base64").subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it("says what went wrong: a missing element, a script that throws, an unreachable host", async () => {
    const missing = await s.run("browser_click", { selector: "#nope" });
    expect(missing.is_error).toBe(true);
    expect(missing.result).toMatchObject({ code: "browser_timeout" });
    const thrown = await s.run("browser_evaluate", { code: "(() => { throw new Error('boom') })()" });
    expect(thrown.result).toMatchObject({ code: "browser_error" });
    expect(thrown.text).toContain("boom");
    // No network in this sandbox: the browser inside cannot reach anything but its own loopback.
    const outside = await s.run("browser_navigate", { url: "http://example.com/" });
    expect(outside.is_error).toBe(true);
    expect(outside.text).toMatch(/ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|ERR_NETWORK/);
  }, 90_000);

  it("refuses bad input before anything runs", async () => {
    for (const [tool, input] of [
      ["browser_navigate", { url: "file:///etc/passwd" }],
      ["browser_navigate", { url: "javascript:alert(1)" }],
      ["browser_click", {}],
      ["browser_type", { selector: "#name" }],
      ["browser_screenshot", { full_page: "yes" }],
      ["browser_evaluate", { code: "" }],
    ] as const) {
      const result = await s.run(tool, input);
      expect(result.result, `${tool} ${JSON.stringify(input)}`).toMatchObject({ code: "invalid_input" });
    }
  });

  it("OpenClaw's browser tool runs the action's tool, checked by that tool's schema", async () => {
    const navigated = await s.run("browser", { action: "navigate", url: `${SITE}/second.html` });
    expect(navigated.result).toEqual({ url: `${SITE}/second.html`, title: "Second", status: 200 });
    const evaluated = await s.run("browser", { action: "evaluate", code: "document.title" });
    expect(JSON.parse(evaluated.text)).toEqual({ result: "Second" });
    const wrong = await s.run("browser", { action: "navigate", url: `${SITE}/`, selector: "#x" });
    expect(wrong.result).toMatchObject({ code: "invalid_input" });
    expect(wrong.text).toContain("browser_navigate");
  });

  it("an interrupt stops a script that never ends, and the page answers again", async () => {
    const back = await s.run("browser_navigate", { url: `${SITE}/` });
    expect(back.is_error, back.text).toBe(false);
    const callId = s.nextCallId();
    const running = s.run("browser_evaluate", { code: "while (true) {}" }, { callId });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await s.manager.cancel(s.tenantId, s.sessionId, callId)).toBe(true);
    const result = await running;
    expect(result.result).toMatchObject({ code: "interrupted" });
    expect(JSON.parse((await s.run("browser_evaluate", { code: "1 + 1" })).text)).toEqual({ result: 2 });
  }, 60_000);

  it("close stops the browser; the next call starts a fresh one", async () => {
    const closed = await s.run("browser_close", {});
    expect(closed.result).toEqual({ ok: true, closed: true });
    const again = await s.run("browser_close", {});
    expect(again.result).toEqual({ ok: true, closed: false });
    const fresh = await s.run("browser_evaluate", { code: "location.href" });
    expect(JSON.parse(fresh.text)).toEqual({ result: "about:blank" });
  }, 60_000);

  it("a sandbox of an image without Chromium answers that it has no browser", async () => {
    const plain = new SessionDriver(s.manager);
    await plain.ensure();
    const result = await plain.run("browser_navigate", { url: `${SITE}/` });
    expect(result.result).toMatchObject({ code: "browser_unavailable" });
    expect(result.text).toContain("has no browser");
  }, 60_000);
});
