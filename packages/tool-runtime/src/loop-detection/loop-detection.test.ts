import { LoopDetectionConfig } from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkLoop, type LoopCallRecord, loopCall, loopCallRecord } from "./index";

const config = LoopDetectionConfig.parse({});

function repeat(times: number, make: (i: number) => LoopCallRecord): LoopCallRecord[] {
  return Array.from({ length: times }, (_, i) => make(i));
}

const readA = (i = 0) =>
  loopCallRecord("read", { path: "a.ts" }, { content: [{ type: "text", text: `x${i}` }] });

describe("generic repeat", () => {
  it("is ok below 10, warns at 10, blocks at 20, stops at 30", () => {
    const next = loopCall("read", { path: "a.ts" });
    expect(checkLoop(repeat(8, readA), next, config)).toEqual({ verdict: "ok" });
    expect(checkLoop(repeat(9, readA), next, config)).toEqual({
      verdict: "warn",
      detector: "generic_repeat",
      count: 10,
      message:
        "Loop warning: read was called with the same arguments 10 times in the last 30 tool calls. " +
        "If this is not making progress, change approach.",
    });
    expect(checkLoop(repeat(19, readA), next, config)).toMatchObject({ verdict: "block", count: 20 });
    expect(checkLoop(repeat(29, readA), next, config)).toMatchObject({ verdict: "stop", count: 30 });
  });

  it("counts only the window, and only identical arguments", () => {
    const other = (i: number) => loopCallRecord("read", { path: `f${i}.ts` }, {});
    const history = [...repeat(25, readA), ...repeat(20, other)];
    expect(checkLoop(history, loopCall("read", { path: "a.ts" }), config)).toMatchObject({
      verdict: "warn",
      count: 10,
    });
  });

  it("ignores volatile argument fields and key order", () => {
    const history = repeat(19, (i) => loopCallRecord("grep", { pattern: "x", timeout_ms: i }, {}));
    expect(checkLoop(history, loopCall("grep", { timeout_ms: 99, pattern: "x" }), config)).toMatchObject({
      verdict: "block",
    });
  });

  it("is off when disabled, and follows per-agent thresholds", () => {
    const next = loopCall("read", { path: "a.ts" });
    expect(checkLoop(repeat(29, readA), next, { ...config, enabled: false })).toEqual({ verdict: "ok" });
    const strict = LoopDetectionConfig.parse({ window: 10, warn_at: 3, block_at: 5, stop_at: 8 });
    expect(checkLoop(repeat(2, readA), next, strict)).toMatchObject({ verdict: "warn", count: 3 });
    expect(checkLoop(repeat(5, readA), next, strict)).toMatchObject({ verdict: "block", count: 6 });
    expect(checkLoop(repeat(40, readA), next, strict)).toMatchObject({ verdict: "stop", count: 10 });
  });
});

describe("poll without progress", () => {
  const poll = (output: string, startedAt: string) =>
    loopCallRecord(
      "process",
      { action: "poll", process_id: "p1" },
      { output, started_at: startedAt, exit: null },
    );

  it("does not count polls whose result changes", () => {
    const history = repeat(25, (i) => poll(`line ${i}`, "t"));
    expect(checkLoop(history, loopCall("process", { action: "poll", process_id: "p1" }), config)).toEqual({
      verdict: "ok",
    });
  });

  it("counts the latest run of unchanged results, ignoring volatile fields", () => {
    const history = [
      ...repeat(5, (i) => poll(`line ${i}`, "t")),
      ...repeat(19, (i) => poll("same", `t${i}`)),
    ];
    expect(
      checkLoop(history, loopCall("process", { action: "poll", process_id: "p1" }), config),
    ).toMatchObject({
      verdict: "block",
      detector: "poll_no_progress",
      count: 20,
      message:
        "Blocked by loop detection: process was polled 20 times with the same arguments and an unchanged " +
        "result. Use different arguments or another tool, or end your turn.",
    });
  });

  it("treats other processes and other actions separately", () => {
    const history = repeat(19, () => poll("same", "t"));
    expect(
      checkLoop(history, loopCall("process", { action: "poll", process_id: "p2" }), config).verdict,
    ).toBe("ok");
    const writes = repeat(12, () =>
      loopCallRecord("process", { action: "write", process_id: "p1", input: "y" }, {}),
    );
    expect(
      checkLoop(writes, loopCall("process", { action: "write", process_id: "p1", input: "y" }), config),
    ).toMatchObject({
      detector: "generic_repeat",
    });
  });
});

describe("ping-pong", () => {
  const a = loopCallRecord("read", { path: "a.ts" }, { text: "A" });
  const b = loopCallRecord("grep", { pattern: "x" }, { text: "B" });

  it("counts an A,B alternation with unchanged results", () => {
    const history = repeat(9, (i) => (i % 2 === 0 ? b : a));
    expect(checkLoop(history, loopCall("read", { path: "a.ts" }), config)).toMatchObject({
      verdict: "warn",
      detector: "ping_pong",
      count: 10,
      message:
        "Loop warning: the last 10 tool calls alternate between read and grep with unchanged results. " +
        "If this is not making progress, change approach.",
    });
  });

  it("stops counting where a result changed", () => {
    const changed = loopCallRecord("read", { path: "a.ts" }, { text: "A2" });
    const history = [b, a, b, changed, b, a, b, a, b];
    const verdict = checkLoop(history, loopCall("read", { path: "a.ts" }), { ...config, warn_at: 6 });
    expect(verdict).toMatchObject({ verdict: "warn", detector: "ping_pong", count: 6 });
  });
});

describe("poll calls", () => {
  it("counts only a string action as a poll action (an object action, even with no prototype, is none)", () => {
    expect(loopCall("process", { action: "poll" }).poll).toBe(true);
    expect(loopCall("process", { action: "kill" }).poll).toBe(false);
    expect(loopCall("process", { action: Object.create(null) }).poll).toBe(false);
    expect(loopCall("process", { action: ["poll"] }).poll).toBe(false);
  });
});

describe("determinism", () => {
  it("gives the same verdict for the same history, and hashes ignore key order", () => {
    const record = fc.record({
      name: fc.constantFrom("read", "grep", "process"),
      input: fc.dictionary(fc.constantFrom("path", "action", "n"), fc.jsonValue(), { maxKeys: 3 }),
      result: fc.jsonValue(),
    });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), record, (calls, next) => {
        const history = calls.map((call) => loopCallRecord(call.name, call.input, call.result));
        const reversedKeys = Object.fromEntries(Object.entries(next.input).reverse());
        expect(JSON.stringify(checkLoop(history, loopCall(next.name, reversedKeys), config))).toBe(
          JSON.stringify(checkLoop(history, loopCall(next.name, next.input), config)),
        );
      }),
    );
  });
});
