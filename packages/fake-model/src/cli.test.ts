import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const CLI = join(import.meta.dirname, "cli.ts");
const running: ChildProcess[] = [];

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function startCli(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (data: Buffer) => {
      output += data.toString();
      const found = /listening on (\S+)/.exec(output);
      if (found?.[1]) resolve(found[1]);
    });
    child.stderr?.on("data", (data: Buffer) => {
      output += data.toString();
    });
    child.once("exit", () => reject(new Error(`cli exited early: ${output}`)));
  });
  return { child, url };
}

async function ask(url: string, text: string): Promise<unknown> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: text }] }),
  });
  return res.json();
}

describe("fake model CLI", () => {
  it("serves a built-in script and exits cleanly on SIGTERM", async () => {
    const { child, url } = await startCli(["--script", "echo"]);
    expect(await ask(url, "repeat me")).toMatchObject({ choices: [{ message: { content: "repeat me" } }] });
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });

  it("loads a JSON script file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fake-model-"));
    try {
      const file = join(dir, "script.json");
      await writeFile(
        file,
        JSON.stringify({ turns: [{ text: "scripted" }], defaultTurn: { text: "after" } }),
      );
      const { url } = await startCli(["--script", file]);
      expect(await ask(url, "x")).toMatchObject({ choices: [{ message: { content: "scripted" } }] });
      expect(await ask(url, "x")).toMatchObject({ choices: [{ message: { content: "after" } }] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown script with the usage text", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "--script", "/nonexistent.json"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    running.push(child);
    let stderr = "";
    child.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain("usage:");
  });
});
