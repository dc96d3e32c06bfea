import { describe, expect, it } from "vitest";
import type { PlannedCall } from "./batch-planner";
import { askUserTool } from "./builtins/ask-user";
import { stateTools } from "./builtins/state";
import { type CallFacts, callVerdict } from "./call-verdict";
import type { EffectiveTool } from "./effective-tool-set";

const [getState] = stateTools;
if (getState === undefined) throw new Error("no state tools");
const tool = (definition: typeof getState, overrides: Partial<EffectiveTool> = {}): EffectiveTool => ({
  ...definition,
  permissionSource: "toolset_default",
  ...overrides,
});

const run: PlannedCall = {
  id: "c1",
  name: "get_state",
  index: 0,
  status: "run",
  group: 0,
  resourceKey: null,
  evaluatedPermission: "allow",
  executor: "inline",
  ownership: "managed",
};
const allow = { verdict: "allow" as const, reason: "the call runs no command" };
const facts = (overrides: Partial<CallFacts> = {}): CallFacts => ({
  planned: run,
  tool: tool(getState),
  exec: allow,
  loop: { verdict: "ok" },
  ...overrides,
});
const loop = (verdict: "warn" | "block" | "stop") =>
  ({ verdict, detector: "generic_repeat", count: 3, message: `loop ${verdict}` }) as const;

describe("callVerdict", () => {
  it("runs an allowed call, carrying a loop warning as its note", () => {
    expect(callVerdict(facts())).toEqual({ kind: "run" });
    expect(callVerdict(facts({ loop: loop("warn") }))).toEqual({ kind: "run", note: "loop warn" });
  });

  it("asks for an always_ask tool or an exec policy's ask", () => {
    expect(callVerdict(facts({ tool: tool(getState, { permissionPolicy: "always_ask" }) }))).toEqual({
      kind: "ask",
    });
    expect(callVerdict(facts({ exec: { verdict: "ask", reason: "not listed" } }))).toEqual({ kind: "ask" });
  });

  it("rejects a gated call instead of asking a person to approve it, after loop detection", () => {
    const asks = tool(getState, { permissionPolicy: "always_ask" });
    expect(callVerdict(facts({ tool: asks, gate: "wait for the evaluator" }))).toEqual({
      kind: "reject",
      message: "wait for the evaluator",
    });
    expect(callVerdict(facts({ gate: "wait for the evaluator", loop: loop("block") }))).toEqual({
      kind: "reject",
      message: "loop block",
    });
  });

  it("hands a client tool to the client", () => {
    expect(callVerdict(facts({ tool: tool(askUserTool) }))).toEqual({ kind: "client" });
  });

  it("rejects in the order of what the model can fix first", () => {
    const everything = facts({
      inputError: "Unexpected token",
      planned: {
        id: "c1",
        name: "nope",
        index: 0,
        status: "rejected",
        evaluatedPermission: "deny",
        error: { code: "unknown_tool", message: "planner says no" },
      },
      tool: undefined,
      exec: { verdict: "deny", reason: "rm is denied" },
      loop: loop("stop"),
    });
    expect(callVerdict(everything)).toEqual({
      kind: "reject",
      message:
        "the arguments for nope were not a JSON object (Unexpected token); call the tool again with valid JSON",
    });
    const { inputError: _, ...readable } = everything;
    expect(callVerdict(readable)).toEqual({ kind: "reject", message: "planner says no" });
    expect(callVerdict({ ...readable, planned: run })).toEqual({
      kind: "reject",
      message: 'unknown tool "get_state"',
    });
    expect(callVerdict({ ...readable, planned: run, tool: tool(getState) })).toEqual({
      kind: "reject",
      message: "The command was not run: rm is denied.",
    });
    expect(callVerdict(facts({ loop: loop("block") }))).toEqual({ kind: "reject", message: "loop block" });
    // A blocked client call is rejected, not handed over.
    expect(callVerdict(facts({ tool: tool(askUserTool), loop: loop("stop") }))).toEqual({
      kind: "reject",
      message: "loop stop",
    });
  });
});
