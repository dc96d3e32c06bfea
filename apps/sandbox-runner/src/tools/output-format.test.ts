import { describe, expect, it } from "vitest";
import { describeEnding, outputWithNotice } from "./output-format";

const hint = (offset: number) => `read {"offset":${offset}}`;

describe("outputWithNotice", () => {
  it("shows complete output as is", () => {
    expect(outputWithNotice({ from: 0, text: "all\n", total: 4, dropped: 0 }, hint)).toBe("all\n");
    expect(outputWithNotice({ from: 0, text: "", total: 0, dropped: 0 }, hint)).toBe("(no output)");
  });

  it("says how to read what a tail left out", () => {
    const text = outputWithNotice({ from: 150, text: "tail", total: 154, dropped: 0 }, hint);
    expect(text).toBe(
      'tail\n[output truncated: showing characters 150-154 of 154; read the start with read {"offset":0}]',
    );
  });

  it("says how to continue a page", () => {
    const text = outputWithNotice({ from: 0, text: "head", total: 10, dropped: 0 }, hint);
    expect(text).toContain('more output follows (6 characters); continue with read {"offset":4}');
  });

  it("says when the oldest output is gone", () => {
    const text = outputWithNotice({ from: 100, text: "kept", total: 104, dropped: 100 }, hint);
    expect(text).toContain("the first 100 characters are no longer kept");
  });
});

describe("describeEnding", () => {
  const base = { exitCode: 0, signal: null, timedOut: false, cancelled: false, limits: null };
  it("names the exit, the signal, timeouts, interrupts and the limits hit", () => {
    expect(describeEnding(base)).toBe("[exit code 0]");
    expect(
      describeEnding({
        ...base,
        exitCode: null,
        signal: "SIGKILL",
        limits: { memoryLimitKills: 1, pidsLimitHits: 0 },
      }),
    ).toBe("[killed by SIGKILL; a process was killed for exceeding the sandbox memory limit]");
    expect(
      describeEnding({ ...base, timedOut: true, limits: { memoryLimitKills: 0, pidsLimitHits: 3 } }, 500),
    ).toBe(
      "[timed out after 500 ms: the command and every process it started were killed; the sandbox process limit was reached (fork failed)]",
    );
    expect(describeEnding({ ...base, cancelled: true })).toContain("interrupted");
  });

  it("says the workspace is full, with its size and the setting that bounds it", () => {
    const full = {
      ...base,
      exitCode: 1,
      limits: { memoryLimitKills: 0, pidsLimitHits: 0, workspaceFull: true },
    };
    expect(describeEnding(full, undefined, 32)).toBe(
      "[exit code 1; the workspace is full (32 MB, the environment's workspace_mb); remove files to make room]",
    );
    expect(describeEnding({ ...full, limits: { ...full.limits, workspaceFull: false } }, undefined, 32)).toBe(
      "[exit code 1]",
    );
  });
});
