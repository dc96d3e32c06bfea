import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// Every model-facing tool against a real hardened container.

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

describe("file tools", () => {
  it("write, read with line paging, and the continuation notice", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    const written = await s.run("write", { path: "docs/long.txt", content: `${lines}\n` });
    expect(written.is_error).toBe(false);
    expect(written.text).toContain("Created /workspace/docs/long.txt");

    const page = await s.run("read", { path: "docs/long.txt", offset: 11, limit: 5 });
    expect(page.text).toContain("    11\tline 11");
    expect(page.text).toContain("    15\tline 15");
    expect(page.text).not.toContain("line 16");
    expect(page.text).toContain('Continue with read {"path":"docs/long.txt","offset":16}');
    expect(page.result).toMatchObject({
      totalLineCount: 30,
      selectedLineCount: 5,
      startLine: 11,
      truncated: true,
    });

    const whole = await s.run("read", { path: "/workspace/docs/long.txt" });
    expect(whole.result).toMatchObject({ totalLineCount: 30, selectedLineCount: 30, truncated: false });
  });

  it("refuses to read a binary file and a directory", async () => {
    await s.run("shell_run", { command: "printf 'a\\0b' > bin.dat" });
    expect((await s.run("read", { path: "bin.dat" })).result).toMatchObject({ code: "file_is_binary" });
    expect((await s.run("read", { path: "docs" })).result).toMatchObject({ code: "is_a_directory" });
  });

  it("edit replaces one exact match, refuses ambiguous or missing ones, and replace_all replaces all", async () => {
    await s.run("write", { path: "edit.txt", content: "alpha beta alpha\ngamma\n" });
    const ambiguous = await s.run("edit", { path: "edit.txt", old_string: "alpha", new_string: "A" });
    expect(ambiguous.is_error).toBe(true);
    expect(ambiguous.result).toMatchObject({ code: "edit_not_unique", matches: 2 });
    const missing = await s.run("edit", { path: "edit.txt", old_string: "delta", new_string: "D" });
    expect(missing.result).toMatchObject({ code: "edit_no_match" });
    const unique = await s.run("edit", { path: "edit.txt", old_string: "gamma", new_string: "G" });
    expect(unique.is_error).toBe(false);
    const all = await s.run("edit", {
      path: "edit.txt",
      old_string: "alpha",
      new_string: "A",
      replace_all: true,
    });
    expect(all.result).toMatchObject({ replacements: 2 });
    expect((await s.run("bash", { command: "cat edit.txt" })).text).toContain("A beta A\nG\n");
  });

  it("apply_patch updates, creates and deletes files, and writes nothing when a hunk does not apply", async () => {
    await s.run("write", { path: "p/one.txt", content: "a\nb\nc\n" });
    await s.run("write", { path: "p/gone.txt", content: "bye\n" });
    const patch = [
      "--- a/p/one.txt",
      "+++ b/p/one.txt",
      "@@ -1,3 +1,3 @@",
      " a",
      "-b",
      "+B",
      " c",
      "--- /dev/null",
      "+++ b/p/new.txt",
      "@@ -0,0 +1,1 @@",
      "+fresh",
      "--- a/p/gone.txt",
      "+++ /dev/null",
      "@@ -1,1 +0,0 @@",
      "-bye",
      "",
    ].join("\n");
    const applied = await s.run("apply_patch", { patch });
    expect(applied.is_error).toBe(false);
    expect((await s.run("read", { path: "p/one.txt" })).text).toContain("     2\tB");
    expect((await s.run("read", { path: "p/new.txt" })).text).toContain("     1\tfresh");
    expect((await s.run("read", { path: "p/gone.txt" })).result).toMatchObject({ code: "path_not_found" });

    const stale =
      "--- a/p/one.txt\n+++ b/p/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+X\n c\n--- /dev/null\n+++ b/p/other.txt\n@@ -0,0 +1 @@\n+x\n";
    const refused = await s.run("apply_patch", { patch: stale });
    expect(refused.result).toMatchObject({ code: "patch_does_not_apply" });
    expect((await s.run("ls", { path: "p" })).text).not.toContain("other.txt");
  });

  it("ls, glob and grep", async () => {
    await s.run("write", { path: "src/a.ts", content: "export const needle = 1;\n" });
    await s.run("write", { path: "src/deep/b.ts", content: "// no match here\n" });
    await s.run("write", { path: "src/.hidden", content: "needle\n" });

    const listing = await s.run("ls", { path: "src" });
    expect(listing.text).toContain("a.ts  (25 bytes)");
    expect(listing.text).toContain("deep/");
    expect(listing.text).not.toContain(".hidden");
    expect((await s.run("ls", { path: "src", all: true })).text).toContain(".hidden");

    const globbed = await s.run("glob", { pattern: "src/**/*.ts" });
    expect(globbed.text.split("\n")).toEqual(["src/a.ts", "src/deep/b.ts"]);
    const dirs = await s.run("glob", { pattern: "src/*", kind: "dir" });
    expect(dirs.text).toBe("src/deep/");

    const found = await s.run("grep", { pattern: "needle", path: "src", glob: "*.ts" });
    expect(found.text).toBe("/workspace/src/a.ts:1:export const needle = 1;");
    expect(
      (await s.run("grep", { pattern: "NEEDLE", path: "src", ignore_case: true, glob: "*.ts" })).text,
    ).toContain("a.ts:1:");
    expect((await s.run("grep", { pattern: "absent-token", path: "src" })).text).toBe("No matches");
  });

  it("rejects invalid input with a clear error result", async () => {
    const result = await s.run("read", { offset: 1 });
    expect(result.is_error).toBe(true);
    expect(result.result).toMatchObject({ code: "invalid_input" });
    expect(result.text).toContain("path");
  });
});

describe("bash (inspection hand)", () => {
  it("runs allowlisted programs from an argv, with no shell", async () => {
    await s.run("write", { path: "b/x.txt", content: "1\n2\n3\n" });
    const counted = await s.run("bash", { command: "wc -l b/x.txt" });
    expect(counted.text).toContain("3 b/x.txt");
    expect(counted.result).toMatchObject({ exitCode: 0 });
    // Without a shell nothing expands, so a word only a shell could expand is refused, not passed on.
    expect((await s.run("bash", { command: "echo $HOME" })).result).toMatchObject({
      code: "bash_not_a_shell",
    });
    expect((await s.run("bash", { command: "echo '$HOME'" })).text).toContain("$HOME");
    expect((await s.run("bash", { command: "pwd", cwd: "b" })).text).toContain("/workspace/b");
  });

  it("refuses shell syntax, other programs and writing options", async () => {
    expect((await s.run("bash", { command: "cat b/x.txt | wc -l" })).result).toMatchObject({
      code: "bash_not_a_shell",
    });
    expect((await s.run("bash", { command: "ls > out.txt" })).result).toMatchObject({
      code: "bash_not_a_shell",
    });
    expect((await s.run("bash", { command: "rm b/x.txt" })).result).toMatchObject({
      code: "bash_program_not_allowed",
    });
    expect((await s.run("bash", { command: "find . -delete" })).result).toMatchObject({
      code: "bash_option_not_allowed",
    });
    expect((await s.run("bash", { command: "rg --pre sh x" })).result).toMatchObject({
      code: "bash_option_not_allowed",
    });
  });
});

describe("shell tools", () => {
  it("shell_exec keeps cwd and exported variables across calls; shell_run uses them", async () => {
    await s.run("shell_exec", { command: "mkdir -p work/dir && cd work/dir && export GREETING=hello" });
    const next = await s.run("shell_exec", { command: "pwd; echo $GREETING" });
    expect(next.text).toContain("/workspace/work/dir\nhello");
    expect(next.result).toMatchObject({ cwd: "/workspace/work/dir", exitCode: 0 });
    const oneShot = await s.run("shell_run", { command: "pwd; echo $GREETING" });
    expect(oneShot.text).toContain("/workspace/work/dir\nhello");
  });

  it("reports a failing command's exit code as an error result", async () => {
    const failed = await s.run("shell_run", { command: "echo oops >&2; exit 3" });
    expect(failed.is_error).toBe(true);
    expect(failed.text).toContain("oops");
    expect(failed.text).toContain("[exit code 3]");
  });

  it("shell_set_cwd, shell_set_env and shell_unset_env change later commands", async () => {
    await s.run("shell_set_cwd", { path: "/workspace/work" });
    await s.run("shell_set_env", { name: "COLOR", value: "it's blue" });
    expect((await s.run("shell_exec", { command: 'pwd; echo "$COLOR"' })).text).toContain(
      "/workspace/work\nit's blue",
    );
    expect((await s.run("bash", { command: "pwd" })).text).toContain("/workspace/work");
    await s.run("shell_unset_env", { name: "COLOR" });
    expect((await s.run("shell_run", { command: 'test -z "$COLOR" && echo "[unset]"' })).text).toContain(
      "[unset]",
    );
    const outside = await s.run("shell_set_cwd", { path: "/etc" });
    expect(outside.result).toMatchObject({ code: "path_outside_workspace" });
  });

  it("shell_exec returns running after its timeout; shell_wait, shell_describe and shell_read_last_output follow it", async () => {
    const started = await s.run("shell_exec", {
      command: "echo begin; sleep 1.5; echo end",
      timeout_ms: 300,
    });
    expect(started.text).toContain("still running");
    expect(started.result).toMatchObject({ status: "running" });
    const described = await s.run("shell_describe", {});
    expect(described.result).toMatchObject({ busy: true });
    const busy = await s.run("shell_exec", { command: "echo second" });
    expect(busy.result).toMatchObject({ code: "shell_busy" });
    const live = await s.run("shell_read_last_output", {});
    expect(live.text).toContain("begin");
    const waited = await s.run("shell_wait", { timeout_ms: 5_000 });
    expect(waited.text).toContain("begin\nend");
    expect(waited.result).toMatchObject({ status: "exited", exitCode: 0 });
  });

  it("shell_history, shell_read_command, shell_close, shell_restart and shell_open", async () => {
    await s.run("shell_exec", { command: "echo remembered" });
    const history = await s.run("shell_history", { limit: 5 });
    const commands = history.result.commands as Array<{ commandId: string; command: string }>;
    const entry = commands.find((c) => c.command === "echo remembered");
    expect(entry).toBeDefined();
    const reread = await s.run("shell_read_command", { command_id: entry?.commandId });
    expect(reread.text).toContain("remembered");

    await s.run("shell_exec", { command: "cd /workspace/work && export KEEP=yes" });
    const closed = await s.run("shell_close", {});
    expect(closed.result).toMatchObject({ open: false });
    const restarted = await s.run("shell_restart", {});
    expect(restarted.result).toMatchObject({
      open: true,
      cwd: "/workspace/work",
      env_overrides: { KEEP: "yes" },
    });
    const opened = await s.run("shell_open", { shell_id: "second" });
    expect(opened.result).toMatchObject({ shell_id: "second", open: true, cwd: "/workspace" });
  });

  it("truncates a finished command's output at 100000 characters and pages the rest", async () => {
    const big = await s.run("shell_run", {
      command: "head -c 150000 /dev/zero | tr '\\0' x; echo; echo TAIL",
    });
    expect(big.text).toContain("TAIL");
    expect(big.text).toContain("output truncated");
    expect(big.text).toContain('shell_read_last_output {"offset":0}');
    expect(big.text.length).toBeLessThan(100_600);
    const start = await s.run("shell_read_last_output", { offset: 0, limit: 10 });
    expect(start.text).toContain("xxxxxxxxxx");
    expect(start.text).toContain("more output follows");
  });

  it("runs background processes that can be polled, written to and signalled", async () => {
    const started = await s.run("shell_run", {
      command: 'while read line; do echo "got $line"; done; echo stdin-closed',
      background: true,
    });
    const processId = started.result.processId as string;
    expect(started.text).toContain(`Running in the background as process ${processId}`);
    await s.run("process", { action: "write", process_id: processId, input: "one\n" });
    await s.run("process", { action: "write", process_id: processId, input: "two\n", eof: true });
    let polled = await s.run("process", { action: "poll", process_id: processId });
    for (let i = 0; i < 50 && !polled.text.includes("stdin-closed"); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      polled = await s.run("process", { action: "poll", process_id: processId });
    }
    expect(polled.text).toContain("got one\ngot two\nstdin-closed");
    const from = await s.run("process", { action: "poll", process_id: processId, offset: 8 });
    expect(from.text).toContain("got two");
    expect(from.text).not.toContain("got one");

    const sleeper = await s.run("shell_run", { command: "sleep 300", background: true });
    const sleeperId = sleeper.result.processId as string;
    await s.run("process", { action: "signal", process_id: sleeperId, signal: "SIGTERM" });
    let status = await s.run("process", { action: "poll", process_id: sleeperId });
    for (let i = 0; i < 50 && status.result.status === "running"; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = await s.run("process", { action: "poll", process_id: sleeperId });
    }
    expect(status.result).toMatchObject({ status: "exited", signal: "SIGTERM" });
    expect((await s.run("process", { action: "list" })).text).toContain(sleeperId);
  });

  it("yield_ms moves a long command to the background", async () => {
    const result = await s.run("shell_run", { command: "echo early; sleep 2; echo late", yield_ms: 200 });
    expect(result.text).toContain("Running in the background");
    expect(result.text).toContain("early");
  });
});

describe("sandbox_describe and sandbox_execute", () => {
  it("describes mounts, limits and the command policy", async () => {
    const described = await s.run("sandbox_describe", {});
    expect(described.result).toMatchObject({
      mounts: [{ path: "/workspace", access: "rw", kind: "workspace" }],
      constraints: { memory_mb: 256, pids_limit: 128, workspace_mb: 1_024 },
      command_policy: { exec_security: "full", exec_ask: "on-miss" },
    });
    expect(Object.keys(described.result.actions as object)).toContain("exec_persistent_shell");
  });

  it("runs every low-level action", async () => {
    const act = (action: string, args: Record<string, unknown>) => s.run("sandbox_execute", { action, args });
    expect((await act("mkdir", { path: "x/y" })).text).toContain("/workspace/x/y");
    expect((await act("write_text", { path: "x/y/f.txt", content: "one\n" })).is_error).toBe(false);
    expect((await act("append_text", { path: "x/y/f.txt", content: "two\n" })).is_error).toBe(false);
    expect((await act("read_text", { path: "x/y/f.txt" })).text).toContain("     2\ttwo");
    expect(
      (await act("replace_text", { path: "x/y/f.txt", old_string: "two", new_string: "2" })).is_error,
    ).toBe(false);
    expect((await act("stat", { path: "x/y/f.txt" })).result).toMatchObject({ type: "file", size: 6 });
    expect((await act("list_dir", { path: "x/y" })).text).toContain("f.txt");
    expect((await act("find_entries", { pattern: "x/**/*.txt" })).text).toBe("x/y/f.txt");
    expect((await act("grep_text", { pattern: "^2$", path: "x" })).text).toContain("f.txt:2:2");
    expect((await act("run_command", { command: "cat /workspace/x/y/f.txt" })).text).toContain("one\n2");
    expect((await act("run_shell", { command: "echo $((6*7))" })).text).toContain("42");
    expect((await act("open_persistent_shell", { shell_id: "lowlevel" })).result).toMatchObject({
      open: true,
    });
    expect(
      (await act("exec_persistent_shell", { shell_id: "lowlevel", command: "cd x && pwd" })).text,
    ).toContain("/workspace/x");
    expect((await act("wait_persistent_shell", { shell_id: "lowlevel", timeout_ms: 100 })).text).toContain(
      "/workspace/x",
    );
    expect((await act("inspect_persistent_shell", { shell_id: "lowlevel" })).result).toMatchObject({
      cwd: "/workspace/x",
    });
    expect((await act("close_persistent_shell", { shell_id: "lowlevel" })).result).toMatchObject({
      open: false,
    });
    expect((await act("read_text", {})).result).toMatchObject({ code: "invalid_input" });
  });
});
