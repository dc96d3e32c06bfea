import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runCli } from "./run";

/** Runs the CLI in-process with captured output, as a script would see it. */
async function cli(args: string[], env: NodeJS.ProcessEnv = { XDG_CONFIG_HOME: "/nonexistent-wl-test" }) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await runCli(args, env, { stdin: new PassThrough(), stdout, stderr });
  return { code, out, err };
}

describe("runCli", () => {
  it("prints help per command and exits 0", async () => {
    const help = await cli(["sessions", "tail", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: wakeloop sessions tail [options] <session-id>");
    expect(help.out).toContain("--after <seq>");
  });

  it("exits 2 with commander's message on bad usage", async () => {
    const bad = await cli(["sessions", "list", "--limit", "zero"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("expected an integer of at least 1");
    expect((await cli(["agents", "create"])).err).toContain("required option '-f, --file <path>'");
  });

  it("documents -m as a repeatable option", async () => {
    expect((await cli(["chat", "--help"])).out).toContain("-m, --message <text>");
  });

  it("exits 2 telling how to log in when there is no login", async () => {
    const result = await cli(["agents", "list"]);
    expect(result).toMatchObject({ code: 2, out: "" });
    expect(result.err).toBe(
      "wakeloop: not logged in: run `wakeloop login`, or set WAKELOOP_URL and WAKELOOP_API_KEY\n",
    );
  });

  it("checks the agent file before connecting", async () => {
    const result = await cli(["agents", "create", "-f", "/nonexistent/agent.yaml"]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^wakeloop: cannot read \/nonexistent\/agent\.yaml: ENOENT/);
  });

  it("says so when the URL answers with something that is not the Wakeloop API", async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" }).end("<html>a web server</html>");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const result = await cli(["agents", "list"], { WAKELOOP_URL: url, WAKELOOP_API_KEY: "k" });
      expect(result.code).toBe(1);
      expect(result.err).toContain(`the server at ${url} answered with something other than JSON`);
    } finally {
      server.close();
    }
  });

  it("exits 5 naming the gateway it cannot reach", async () => {
    const result = await cli(["sessions", "list"], {
      WAKELOOP_URL: "http://127.0.0.1:9",
      WAKELOOP_API_KEY: "k",
    });
    expect(result.code).toBe(5);
    expect(result.err).toContain("cannot reach the Wakeloop gateway at http://127.0.0.1:9");
  });
});
