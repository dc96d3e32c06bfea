import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Session, SessionEvent } from "@wakeloop/contracts";
import { defaultRunMode, entryArgs, Platform, startTcpProxy, TmuxTerminal } from "@wakeloop/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// The `wakeloop` CLI as a person and a script use it: the real process in a real terminal (tmux)
// against the running platform and the fake model. Commands run in order, each on the state the
// previous ones left: log in, create an agent from YAML, chat through approvals and a custom tool,
// list sessions as JSON, and tail a session across a dropped connection.

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = [process.execPath, ...entryArgs("packages/cli/src/main.ts", defaultRunMode(), ROOT)];

let platform: Platform;
let home: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
  home = await mkdtemp(join(tmpdir(), "wl-cli-e2e-"));
}, 120_000);

afterEach(async () => {
  await Promise.all(terminals.splice(0).map((terminal) => terminal.close()));
});

afterAll(async () => {
  await platform?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

/** The CLI's environment: its own config directory, and no inherited WAKELOOP_* login. */
const cliEnv = (extra: Record<string, string> = {}) => ({
  XDG_CONFIG_HOME: home,
  WAKELOOP_URL: "",
  WAKELOOP_API_KEY: "",
  ...extra,
});

async function terminal(args: string[], env: Record<string, string> = {}): Promise<TmuxTerminal> {
  const started = await TmuxTerminal.start({ command: [...CLI, ...args], env: cliEnv(env), cwd: ROOT });
  terminals.push(started);
  return started;
}

/** Runs the CLI as a script does: captured output and exit code. */
async function script(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const child = promisify(execFile)(CLI[0] ?? "", [...CLI.slice(1), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...cliEnv() },
    });
    // A script's standard input is empty: nothing can answer a question.
    child.child.stdin?.end();
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const configFile = () => join(home, "wakeloop", "config.json");
let agentId = "";
let sessionId = "";

describe("wakeloop CLI", () => {
  it("logs in interactively, checking the key first, and keeps the login in a 0600 file", async () => {
    const refused = await script(["login", "--url", platform.baseUrl, "--api-key", "wl_not-a-key"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("authentication failed");
    await expect(stat(configFile())).rejects.toMatchObject({ code: "ENOENT" });

    const login = await terminal(["login"]);
    await login.waitFor("gateway URL:");
    await login.sendLine(platform.baseUrl);
    await login.waitFor("API key:");
    await login.sendLine(platform.apiKey);
    await login.waitFor(`logged in to ${platform.baseUrl}`);
    expect(await login.exitCode()).toBe(0);
    // The key was typed, not shown.
    expect(await login.screen()).not.toContain(platform.apiKey);
    expect((await stat(configFile())).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(configFile(), "utf8"))).toEqual({
      url: platform.baseUrl,
      api_key: platform.apiKey,
    });
  });

  it("creates an agent from YAML, and refuses an invalid file by field path without creating anything", async () => {
    const bad = join(home, "bad.yaml");
    await writeFile(bad, "name: broken\nmodel:\n  provider: nobody\n  id: m\n");
    const refused = await script(["agents", "create", "-f", bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^ {2}model\.provider: /m);

    const file = join(home, "agent.yaml");
    await writeFile(
      file,
      [
        "name: cli-helper",
        "model:",
        "  provider: openai_compatible",
        "  id: fake-gpt",
        `  base_url: ${platform.fakeModel().base_url}`,
        "system: You help from the terminal.",
        "tools:",
        "  - type: builtin",
        "    configs:",
        "      - name: set_state",
        "        permission_policy: always_ask",
        "  - type: custom",
        "    name: pick_color",
        "    description: Ask the person at the terminal for a color",
        "    input_schema: {type: object, properties: {}}",
        "",
      ].join("\n"),
    );
    const created = await script(["agents", "create", "-f", file, "--json"]);
    expect(created.code, created.stderr).toBe(0);
    agentId = JSON.parse(created.stdout).id;
    const listed = await script(["agents", "list", "--json"]);
    expect(JSON.parse(listed.stdout).data.map((agent: { name: string }) => agent.name)).toEqual([
      "cli-helper",
    ]);
  });

  it("chats: streams the answer, asks inline for approvals and a custom tool result", async () => {
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "color", value: "blue" } }] },
      { text: "Saved blue for you." },
      { toolCalls: [{ name: "set_state", input: { key: "color", value: "red" } }] },
      { text: "Fine, I left it alone." },
      { toolCalls: [{ name: "pick_color", input: {} }] },
      { text: "Green it is." },
    );
    const chat = await terminal(["chat", "cli-helper", "--title", "from the terminal"]);
    await chat.waitFor("you> ");
    sessionId = /session (sesn_\w+)/.exec(await chat.screen())?.[1] ?? "";
    expect(sessionId).not.toBe("");

    await chat.sendLine("remember blue");
    await chat.waitFor("allow set_state? [y/n]> ");
    expect(await chat.screen()).toContain('→ set_state {"key":"color","value":"blue"} (needs your approval)');
    await chat.sendLine("y");
    await chat.waitFor("Saved blue for you.");

    await chat.waitFor("you> ", { times: 2 });
    await chat.sendLine("now red");
    await chat.waitFor("allow set_state? [y/n]> ", { times: 2 });
    await chat.sendLine("n");
    await chat.waitFor("why (sent to the agent; Enter for no reason)> ");
    await chat.sendLine("keep blue");
    await chat.waitFor("Fine, I left it alone.");

    await chat.waitFor("you> ", { times: 3 });
    await chat.sendLine("pick one");
    await chat.waitFor("result of pick_color (start with ! to report an error)> ");
    await chat.sendLine("green");
    await chat.waitFor("Green it is.");
    await chat.waitFor("you> ", { times: 4 });
    await chat.sendLine("/exit");
    expect(await chat.exitCode()).toBe(0);
    expect(await chat.screen()).toContain(`continue with: wakeloop chat --session ${sessionId}`);

    const events = await platform.events(sessionId);
    const answers = events.filter((event) => event.type.startsWith("user.") && event.type !== "user.message");
    expect(answers).toMatchObject([
      { type: "user.tool_confirmation", result: "allow" },
      { type: "user.tool_confirmation", result: "deny", deny_message: "keep blue" },
      { type: "user.custom_tool_result", content: [{ type: "text", text: "green" }] },
    ]);
    const state = await platform.request("GET", `/v1/sessions/${sessionId}`);
    expect(state.body).toMatchObject({ title: "from the terminal", status: "idle" });
  });

  it("shows progress while the agent works, and Ctrl-C interrupts the running turn", async () => {
    platform.fake.enqueue({ text: "Too slow to finish.", delayMs: 20_000 });
    const chat = await terminal(["chat", "--session", sessionId]);
    await chat.waitFor("you> ");
    await chat.sendLine("take your time");
    await chat.waitFor("waiting for the agent…");
    await chat.press("C-c");
    await chat.waitFor("interrupting…");
    await chat.waitFor("you> ", { times: 2 });
    await chat.press("C-d");
    expect(await chat.exitCode(), await chat.screen()).toBe(0);
    const events = await platform.events(sessionId);
    expect(events.some((event) => event.type === "user.interrupt")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
  });

  it("chats from a script: -m messages, --json events, and a clear exit when nobody can answer", async () => {
    platform.fake.enqueue({ text: "Scripted hello." });
    // Options before the agent: -m takes one value each time, never the agent.
    const chat = await script(["chat", "-m", "hi", "--json", agentId]);
    expect(chat.code, chat.stderr).toBe(0);
    const lines = chat.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as SessionEvent);
    expect(lines.map((event) => event.type)).toContain("agent.message");
    expect(lines.at(-1)).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });

    platform.fake.enqueue({ toolCalls: [{ name: "set_state", input: { key: "k", value: 1 } }] });
    const waiting = await script(["chat", agentId, "-m", "change it"]);
    expect(waiting.code).toBe(2);
    expect(waiting.stderr).toMatch(
      /input ended while the session waits for an answer; answer later with: wakeloop chat --session sesn_/,
    );

    // Continuing that session asks what it waits on before anything else; Ctrl-C there leaves it
    // waiting, with the way back.
    const waitingId = /--session (sesn_\w+)/.exec(waiting.stderr)?.[1] ?? "";
    const left = await terminal(["chat", "--session", waitingId]);
    await left.waitFor("allow set_state? [y/n]> ");
    await left.press("C-c");
    expect(await left.exitCode()).toBe(2);
    expect(await left.screen()).toContain(`answer later with: wakeloop chat --session ${waitingId}`);
    platform.fake.enqueue({ text: "Changed after all." });
    const resumed = await terminal(["chat", "--session", waitingId]);
    await resumed.waitFor("allow set_state? [y/n]> ");
    await resumed.sendLine("yes");
    await resumed.waitFor("Changed after all.");
    await resumed.waitFor("you> ");
    await resumed.press("C-d");
    expect(await resumed.exitCode()).toBe(0);
    await platform.waitForIdle(waitingId, "end_turn");
  });

  it("lists sessions as JSON for scripts, with filters", async () => {
    const listed = await script(["sessions", "list", "--json", "--agent", agentId, "--status", "idle"]);
    expect(listed.code, listed.stderr).toBe(0);
    const page = JSON.parse(listed.stdout) as { data: Session[]; next_after_id: string | null };
    // The interactive chat and the two scripted ones, newest first.
    expect(page.data).toHaveLength(3);
    expect(page.data.at(-1)?.id).toBe(sessionId);
    expect(page.data.every((session) => session.status === "idle" && session.agent.id === agentId)).toBe(
      true,
    );
    expect(page.next_after_id).toBeNull();
    const first = await script(["sessions", "list", "--json", "--limit", "1"]);
    expect(JSON.parse(first.stdout).next_after_id).toBe(page.data[0]?.id);
    const running = await script(["sessions", "list", "--json", "--status", "running"]);
    expect(JSON.parse(running.stdout).data).toEqual([]);
    // For scripts, tail --until-idle prints what there is and stops at the session's latest idle.
    const tailed = await script(["sessions", "tail", sessionId, "--until-idle", "--json"]);
    expect(tailed.code, tailed.stderr).toBe(0);
    const events = tailed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as SessionEvent);
    expect(events.map((event) => event.seq)).toEqual(
      (await platform.events(sessionId)).map((event) => event.seq),
    );
    expect(events.at(-1)?.type).toBe("session.status_idle");
    const missing = await script(["sessions", "tail", "sesn_missing"]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^wakeloop: not found: /);
  });

  it("tails a session and resumes after the last event it printed when the connection drops", async () => {
    const before = await platform.events(sessionId);
    const last = before.at(-1)?.seq ?? 0;
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(platform.baseUrl).port) });
    try {
      const tail = await terminal(["sessions", "tail", sessionId], {
        WAKELOOP_URL: `http://127.0.0.1:${proxy.port}`,
      });
      await tail.waitFor(`[${last}] session.status_idle`);
      proxy.drop();
      await tail.waitFor(`connection lost; resuming after event ${last}`);
      platform.fake.enqueue({ text: "After the drop." });
      await platform.request("POST", `/v1/sessions/${sessionId}/events`, {
        events: [{ type: "user.message", content: [{ type: "text", text: "still there?" }] }],
      });
      await tail.waitFor("After the drop.");
      await platform.waitForIdle(sessionId, "end_turn", last);
      const all: SessionEvent[] = await platform.events(sessionId);
      const screen = await tail.waitFor(`[${all.at(-1)?.seq}] session.status_idle`);
      // Every event exactly once, in order, across the reconnect.
      const printed = [...screen.matchAll(/^\[(\d+)\] (\S+)/gm)].map((match) => [Number(match[1]), match[2]]);
      expect(printed).toEqual(all.map((event) => [event.seq, event.type]));
      await tail.press("C-c");
      expect(await tail.exitCode()).toBe(130);
    } finally {
      await proxy.cut();
    }
  });
});
