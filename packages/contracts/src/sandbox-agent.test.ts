import { describe, expect, it } from "vitest";
import { AgentOps, AgentReply, AgentRequest } from "./sandbox-agent";

describe("the sandbox agent's frames", () => {
  it("has a request frame for every op, and only for those", () => {
    const framed = AgentRequest.options.map((frame) => frame.shape.op.value).sort();
    expect(framed).toEqual(Object.keys(AgentOps).sort());
  });

  it("reads a request by its op and refuses arguments of another op", () => {
    const request = { id: 3, op: "fs.write", args: { path: "a.txt", content: "hi" } };
    expect(AgentRequest.parse(request)).toEqual(request);
    expect(AgentRequest.safeParse({ ...request, op: "proc.poll" }).success).toBe(false);
    expect(AgentRequest.safeParse({ ...request, op: "fs.format" }).success).toBe(false);
  });

  it("reads a reply by ok: a result, or an error with a code", () => {
    expect(AgentReply.parse({ id: 1, ok: true, result: { cancelled: true } })).toMatchObject({ ok: true });
    expect(AgentReply.safeParse({ id: 1, ok: false }).success).toBe(false);
    expect(AgentReply.safeParse({ id: 0, ok: true, result: null }).success).toBe(false);
    const failed = { id: 2, ok: false, error: { code: "path_not_found", message: "a.txt does not exist" } };
    expect(AgentReply.parse(failed)).toEqual(failed);
  });

  it("reads each op's result with its own schema", () => {
    const summary = {
      processId: "proc_1",
      commandId: null,
      command: "sleep 1",
      status: "running",
      exitCode: null,
      signal: null,
      timedOut: false,
      cancelled: false,
      limits: null,
      startedAt: "2026-01-01T00:00:00.000Z",
      outputChars: 0,
      background: true,
      durationMs: 12,
      stdinOpen: true,
    };
    expect(AgentOps["proc.signal"].result.parse(summary)).toEqual(summary);
    expect(AgentOps["proc.signal"].result.safeParse({ ...summary, status: "zombie" }).success).toBe(false);
    expect(AgentOps["proc.list"].result.safeParse(summary).success).toBe(false);
    expect(AgentOps["proc.list"].result.parse({ processes: [summary] })).toEqual({ processes: [summary] });
  });
});
