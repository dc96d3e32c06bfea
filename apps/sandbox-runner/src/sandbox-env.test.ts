import type { EnvironmentConfig } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// Which environment each tool's processes start with, in a real container (issue #8, point 4).
// Mostly under exec_security=full, so every call runs and what is checked is the environment the agent
// hands each process; the first case checks the runner's own copy of the policy in front of it.

let fixture: RunnerFixture;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
});

afterAll(async () => {
  await fixture?.cleanup();
});

async function session(
  policy: Partial<EnvironmentConfig> = { exec_security: "full" },
): Promise<SessionDriver> {
  const s = new SessionDriver(await fixture.manager(), undefined, testEnvironment(policy));
  await s.ensure();
  return s;
}

async function listing(s: SessionDriver): Promise<string> {
  return (await s.run("ls", {})).text;
}

describe("the runner's exec check", () => {
  it("refuses a variable that chooses code unless the policy allows or a person approved it", async () => {
    const setRc = { name: "RIPGREP_CONFIG_PATH", value: "/workspace/rgrc", shell_id: "main" };
    const denying = await session({ exec_security: "deny" });
    expect(await denying.call("shell_set_env", setRc, { approved: true })).toMatchObject({
      outcome: "completed",
      is_error: true,
      result: { code: "exec_denied" },
    });
    const asking = await session({ exec_security: "allowlist", exec_allowlist: ["ls"], exec_ask: "on-miss" });
    expect(await asking.call("shell_set_env", setRc, { approved: false })).toMatchObject({
      outcome: "needs_approval",
    });
    expect(
      await asking.call("shell_set_env", { ...setRc, name: "GREETING" }, { approved: false }),
    ).toMatchObject({
      outcome: "completed",
      is_error: false,
    });
  });
});

describe("read-only tools", () => {
  it("grep and the inspection bash ignore the variables the shell exports", async () => {
    const s = await session();
    await s.run("write", { path: "rgrc", content: "--pre=/bin/sh\n" });
    await s.run("write", { path: "payload.txt", content: "touch /workspace/pwned-grep\n" });
    await s.run("shell_set_env", { name: "RIPGREP_CONFIG_PATH", value: "/workspace/rgrc", shell_id: "main" });
    await s.run("shell_set_env", { name: "GREETING", value: "from-the-shell", shell_id: "main" });
    // The shell really has them: shell_run starts from the shell's environment.
    const env = await s.run("shell_run", { command: 'echo "$RIPGREP_CONFIG_PATH $GREETING"' });
    expect(env.text).toContain("/workspace/rgrc from-the-shell");

    const found = await s.run("grep", { pattern: "touch", path: "payload.txt" });
    expect(found.text).toContain("payload.txt:1:touch /workspace/pwned-grep");
    const inspected = await s.run("bash", { command: "rg touch payload.txt" });
    expect(inspected.text).toContain("touch /workspace/pwned-grep");
    expect(await listing(s)).not.toContain("pwned-grep");
  });
});

describe("startup hooks", () => {
  it("BASH_ENV exported inside a command does not reach shell_run or a restarted shell", async () => {
    const s = await session();
    await s.run("write", { path: "hook.sh", content: "touch /workspace/pwned-hook\n" });
    await s.run("shell_exec", { command: "export BASH_ENV=/workspace/hook.sh ENV=/workspace/hook.sh" });
    await s.run("shell_run", { command: "true" });
    await s.run("shell_restart", { shell_id: "main" });
    await s.run("shell_exec", { command: "true" });
    expect(await listing(s)).not.toContain("pwned-hook");
    const described = await s.run("shell_describe", { shell_id: "main" });
    expect(described.result).toMatchObject({ env_overrides: {} });
  });

  it("BASH_ENV set through shell_set_env (which the exec policy checks) reaches shell_run", async () => {
    const s = await session();
    await s.run("write", { path: "hook.sh", content: "touch /workspace/ran-hook\n" });
    await s.run("shell_set_env", { name: "BASH_ENV", value: "/workspace/hook.sh", shell_id: "main" });
    await s.run("shell_run", { command: "true" });
    expect(await listing(s)).toContain("ran-hook");
  });
});
