import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture } from "../testing/docker-fixture";
import { SessionDriver } from "../testing/session-driver";

// run_sandbox_code against a real hardened container: each interpreter of the image, its limits.

let fixture: RunnerFixture;
let s: SessionDriver;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
  s = new SessionDriver(await fixture.manager());
  await s.ensure();
});

afterAll(async () => {
  await fixture?.cleanup();
});

describe("run_sandbox_code", () => {
  it("runs JavaScript by default, and Python and bash, inside the container", async () => {
    await s.run("write", { path: "only-here.txt", content: "sandbox secret\n" });
    const js = await s.run("run_sandbox_code", {
      code: "const fs = require('node:fs'); console.log(fs.readFileSync('/workspace/only-here.txt', 'utf8').trim().toUpperCase())",
    });
    expect(js.is_error).toBe(false);
    expect(js.text).toContain("SANDBOX SECRET");
    const py = await s.run("run_sandbox_code", {
      language: "python",
      code: "import os\nprint(os.getuid() != 0, open('only-here.txt').read().split()[1])",
    });
    expect(py.text).toContain("True secret");
    const sh = await s.run("run_sandbox_code", { language: "bash", code: 'echo "it\'s $((6 * 7))"' });
    expect(sh.text).toContain("it's 42");
  });

  it("reports a failing program's exit code and output as an error result", async () => {
    const failed = await s.run("run_sandbox_code", {
      language: "python",
      code: "import sys\nprint('half done')\nsys.exit(4)",
    });
    expect(failed.is_error).toBe(true);
    expect(failed.text).toContain("half done");
    expect(failed.text).toContain("[exit code 4]");
  });

  it("stops a program at its timeout", async () => {
    const slow = await s.run("run_sandbox_code", { code: "setTimeout(() => {}, 60000)", timeout_ms: 500 });
    expect(slow.is_error).toBe(true);
    expect(slow.text).toContain("timed out after 500 ms");
  });

  it("refuses an unknown language, empty code and oversized code before running anything", async () => {
    for (const input of [
      { code: "print(1)", language: "ruby" },
      { code: "" },
      { code: "x".repeat(32_001) },
    ]) {
      const refused = await s.run("run_sandbox_code", input);
      expect(refused.is_error).toBe(true);
      expect(refused.result).toMatchObject({ code: "invalid_input" });
    }
  });
});
