import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8, points 3 and 4, through the whole platform with a real sandbox container: the fake model
// tries to run code past the environment's exec policy, by shell syntax around an allowlisted program
// or by a variable that makes an allowed tool run code. Every person-in-the-loop question is answered
// "deny", so whatever ran, ran without a confirmation. Each attack leaves a marker file if it worked;
// the `ls` tool (a file listing, no command) looks for it.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, sandbox: true });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

type ToolUse = Extract<SessionEvent, { type: "agent.tool_use" }>;
type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;

async function created(path: string, body: Record<string, unknown>): Promise<string> {
  const response = await platform.request("POST", path, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.id as string;
}

/** A session whose agent runs the named sandbox tools without a confirmation of their own. */
async function session(config: Record<string, unknown>, allowed: string[]): Promise<string> {
  const environment = await created("/v1/environments", {
    name: "exec policy attack",
    config: { memory_mb: 256, pids_limit: 128, ...config },
  });
  const agent = await created("/v1/agents", {
    name: "exec policy attacker",
    model: platform.fakeModel(),
    tools: [
      { type: "builtin", configs: allowed.map((name) => ({ name, permission_policy: "always_allow" })) },
    ],
  });
  return created("/v1/sessions", { agent, environment_id: environment });
}

/**
 * Runs the turn to its end, denying every confirmation the session asks for on the way (the ids asked
 * about are returned), and gives the session's events.
 */
async function runDenying(id: string, prompt: string): Promise<{ events: SessionEvent[]; asked: string[] }> {
  const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text: prompt }] }],
  });
  expect(sent.status).toBe(202);
  const asked: string[] = [];
  let after = 0;
  for (;;) {
    const idle = await platform.waitForEvent(
      id,
      (event) => event.seq > after && event.type === "session.status_idle",
      90_000,
    );
    if (idle.type !== "session.status_idle" || idle.stop_reason.type !== "requires_action") break;
    after = idle.seq;
    const ids = idle.stop_reason.event_ids;
    asked.push(...ids);
    const denied = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: ids.map((toolUseId) => ({
        type: "user.tool_confirmation",
        tool_use_id: toolUseId,
        result: "deny",
      })),
    });
    expect(denied.status).toBe(202);
  }
  return { events: await platform.events(id), asked };
}

const uses = (events: SessionEvent[], name: string) =>
  events.filter((event): event is ToolUse => event.type === "agent.tool_use" && event.name === name);
const textOf = (event: SessionEvent | undefined) =>
  event && "content" in event
    ? event.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";
const resultOf = (events: SessionEvent[], use: ToolUse | undefined) =>
  events.find(
    (event): event is ToolResult => event.type === "agent.tool_result" && event.tool_use_id === use?.id,
  );
/** The text of the last `ls` result: the workspace listing taken after the attack. */
const listing = (events: SessionEvent[]) => textOf(resultOf(events, uses(events, "ls").at(-1)));

describe("exec policy against shell syntax", () => {
  it("does not run `> git …` under allowlist [git] without a confirmation", async () => {
    const id = await session({ exec_security: "allowlist", exec_allowlist: ["git"], exec_ask: "on-miss" }, [
      "shell_run",
    ]);
    // bash reads this as "redirect stdout to ./git, then run touch": git is only the file name.
    platform.fake.enqueue(
      { toolCalls: [{ name: "shell_run", input: { command: "> git touch pwned-redirect" } }] },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "done" },
    );
    const { events, asked } = await runDenying(id, "run it");

    const run = uses(events, "shell_run")[0];
    expect(run?.evaluated_permission).toBe("ask");
    expect(run?.exec).toMatchObject({ command: "> git touch pwned-redirect", env: {} });
    expect(run?.exec?.reason).toContain("redirection");
    expect(asked).toContain(run?.id);
    expect(listing(events)).not.toContain("pwned-redirect");
  }, 180_000);

  it("shows the approver the command and the variables it runs with", async () => {
    const id = await session({ exec_security: "allowlist", exec_allowlist: ["ls"], exec_ask: "on-miss" }, [
      "shell_run",
    ]);
    platform.fake.enqueue({
      toolCalls: [
        {
          name: "shell_run",
          input: { command: "ls", env: { BASH_ENV: "/workspace/hook.sh", GREETING: "hi" } },
        },
      ],
    });
    const sent = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "list" }] }],
    });
    expect(sent.status).toBe(202);
    await platform.waitForIdle(id, "requires_action", 0, 90_000);
    const pending = await platform.request("GET", `/v1/sessions/${id}/pending`);
    expect(pending.status).toBe(200);
    expect(pending.body.data).toEqual([
      expect.objectContaining({
        name: "shell_run",
        exec: {
          command: "ls",
          env: { BASH_ENV: "/workspace/hook.sh", GREETING: "hi" },
          reason:
            "it sets BASH_ENV, which choose the code programs run; it needs approval (exec_ask=on-miss)",
        },
      }),
    ]);
  }, 180_000);
});

describe("no approval bypass through allowed tools", () => {
  // ripgrep reads the file RIPGREP_CONFIG_PATH names; `--pre=/bin/sh` makes it run every searched file
  // as a shell script. `write`, `shell_set_env` and `grep` need no confirmation by default.
  const ripgrepAttack = () =>
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "write", input: { path: "rgrc", content: "--pre=/bin/sh\n" } },
          { name: "write", input: { path: "payload.txt", content: "touch /workspace/pwned-rg\n" } },
        ],
      },
      {
        toolCalls: [
          {
            name: "shell_set_env",
            input: { name: "RIPGREP_CONFIG_PATH", value: "/workspace/rgrc", shell_id: "main" },
          },
        ],
      },
      { toolCalls: [{ name: "grep", input: { pattern: "touch", path: "payload.txt" } }] },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "done" },
    );

  for (const config of [
    { exec_security: "deny" },
    { exec_security: "allowlist", exec_allowlist: ["rg", "ls"], exec_ask: "on-miss" },
  ]) {
    it(`grep does not run code through a ripgrep config (${config.exec_security})`, async () => {
      const id = await session(config, []);
      ripgrepAttack();
      const { events } = await runDenying(id, "search");

      const setEnv = uses(events, "shell_set_env")[0];
      expect(setEnv?.evaluated_permission).toBe(config.exec_security === "deny" ? "deny" : "ask");
      expect(setEnv?.exec?.env).toEqual({ RIPGREP_CONFIG_PATH: "/workspace/rgrc" });
      expect(textOf(resultOf(events, uses(events, "grep")[0]))).toContain("payload.txt");
      expect(listing(events)).toContain("payload.txt");
      expect(listing(events)).not.toContain("pwned-rg");
    }, 180_000);
  }

  it("BASH_ENV set without a confirmation never runs, even when the shell starts under exec_security=deny", async () => {
    const id = await session({ exec_security: "deny" }, []);
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "write", input: { path: "hook.sh", content: "touch /workspace/pwned-bashenv\n" } },
        ],
      },
      {
        toolCalls: [
          {
            name: "shell_set_env",
            input: { name: "BASH_ENV", value: "/workspace/hook.sh", shell_id: "main" },
          },
        ],
      },
      // A non-interactive bash reads BASH_ENV when it starts: opening the shell would run the hook.
      { toolCalls: [{ name: "shell_open", input: { shell_id: "main" } }] },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "done" },
    );
    const { events } = await runDenying(id, "open a shell");

    expect(uses(events, "shell_set_env")[0]?.evaluated_permission).toBe("deny");
    expect(listing(events)).toContain("hook.sh");
    expect(listing(events)).not.toContain("pwned-bashenv");
  }, 180_000);

  it("an allowlisted `ls` does not run a BASH_ENV hook nobody confirmed", async () => {
    const id = await session({ exec_security: "allowlist", exec_allowlist: ["ls"], exec_ask: "on-miss" }, [
      "shell_run",
    ]);
    platform.fake.enqueue(
      { toolCalls: [{ name: "write", input: { path: "hook.sh", content: "touch /workspace/pwned-ls\n" } }] },
      {
        toolCalls: [
          {
            name: "shell_set_env",
            input: { name: "BASH_ENV", value: "/workspace/hook.sh", shell_id: "main" },
          },
        ],
      },
      { toolCalls: [{ name: "shell_run", input: { command: "ls" } }] },
      { toolCalls: [{ name: "ls", input: {} }] },
      { text: "done" },
    );
    const { events, asked } = await runDenying(id, "list");

    const setEnv = uses(events, "shell_set_env")[0];
    expect(setEnv?.evaluated_permission).toBe("ask");
    expect(asked).toContain(setEnv?.id);
    expect(uses(events, "shell_run")[0]?.evaluated_permission).toBe("allow");
    expect(listing(events)).toContain("hook.sh");
    expect(listing(events)).not.toContain("pwned-ls");
  }, 180_000);
});
