import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BatchPlan, type ModelToolCall, orderResults, planBatch } from "./batch-planner";
import { computeEffectiveTools } from "./effective-tools";
import { keysConflict } from "./resource-key";
import { policyContext, sandboxReady } from "./test-context";

const effective = computeEffectiveTools(policyContext(), sandboxReady);

/** The mixed batch described in the package notes: every branch of the planner in one batch. */
const mixed: ModelToolCall[] = [
  { id: "c0", name: "read", input: { path: "a.ts" } },
  { id: "c1", name: "grep", input: { pattern: "TODO" } },
  { id: "c2", name: "frobnicate", input: {} },
  { id: "c3", name: "write", input: { path: "a.ts", content: "x" } },
  { id: "c4", name: "write", input: { path: 5 } },
  { id: "c5", name: "read", input: { path: "b.ts" } },
  { id: "c6", name: "get_state", input: { key: "plan" } },
  { id: "c7", name: "get_state", input: { key: "plan" } },
  { id: "c8", name: "apply_patch", input: { patch: "--- a" } },
  { id: "c9", name: "shell_run", input: { command: "make test" } },
  { id: "c10", name: "ask_user", input: { question: "Ship it?" } },
  { id: "c3", name: "read", input: { path: "c.ts" } },
];

describe("planBatch on a mixed batch", () => {
  const plan = planBatch(mixed, effective);

  it("groups in the model's order: parallel reads together, writes alone, conflicts split", () => {
    expect(plan.groups).toEqual([["c0", "c1"], ["c3"], ["c5", "c6"], ["c7"], ["c9"], ["c10"]]);
  });

  it("rejects unknown, invalid, unavailable and duplicate calls with planned errors", () => {
    const rejected = plan.calls.filter((call) => call.status === "rejected");
    expect(rejected.map((call) => [call.id, call.error.code])).toEqual([
      ["c2", "unknown_tool"],
      ["c4", "invalid_input"],
      ["c8", "unavailable_tool"],
      ["c3", "duplicate_call_id"],
    ]);
    expect(rejected[0]?.error.message).toMatch(
      /^unknown tool "frobnicate"; available tools: agent_compare_setup, agent_describe_setup, ask_user, bash, /,
    );
    expect(rejected[1]?.error.message).toBe(
      "invalid input for write: input must have required property 'content'; input.path must be string. " +
        "Fix the input and call the tool again.",
    );
    expect(rejected[2]?.error.message).toBe(
      'tool "apply_patch" is not available now: anthropic models edit files with edit; apply_patch is hidden while edit is available',
    );
    for (const call of rejected) expect(call.evaluatedPermission).toBe("deny");
  });

  it("records resource keys, permissions and executors of the calls that run", () => {
    const byId = (id: string) => plan.calls.find((call) => call.id === id);
    expect(byId("c3")).toMatchObject({
      status: "run",
      resourceKey: "fs:a.ts",
      group: 1,
      evaluatedPermission: "allow",
    });
    expect(byId("c9")).toMatchObject({
      status: "run",
      resourceKey: "shell",
      evaluatedPermission: "ask",
      executor: "sandbox",
    });
    expect(byId("c10")).toMatchObject({ status: "run", executor: "client", ownership: "managed" });
    expect(plan.calls.map((call) => call.index)).toEqual(mixed.map((_, index) => index));
  });

  it("is serializable and reads back through its schema", () => {
    expect(BatchPlan.parse(JSON.parse(JSON.stringify(plan)))).toEqual(plan);
  });
});

describe("planBatch rules", () => {
  it("serializes parallel-safe calls on the same key and keeps them in the model's order", () => {
    const plan = planBatch(
      [
        { id: "a", name: "shell_wait", input: {} },
        { id: "b", name: "shell_wait", input: { shell_id: "main" } },
        { id: "c", name: "shell_wait", input: { shell_id: "other" } },
      ],
      effective,
    );
    expect(plan.groups).toEqual([["a"], ["b", "c"]]);
  });

  it("a whole-scope key conflicts with the keys under it", () => {
    const plan = planBatch(
      [
        { id: "a", name: "list_state_keys", input: {} },
        { id: "b", name: "get_state", input: { key: "x" } },
      ],
      effective,
    );
    expect(plan.groups).toEqual([["a"], ["b"]]);
  });

  it("an empty batch is an empty plan", () => {
    expect(planBatch([], effective)).toEqual({ version: 1, calls: [], groups: [] });
  });
});

describe("orderResults", () => {
  it("returns results in the model's order whatever order they finished in", () => {
    const plan = planBatch(mixed.slice(0, 4), effective);
    const finished = [{ id: "c3" }, { id: "c0" }, { id: "c2" }, { id: "c1" }];
    expect(orderResults(plan, finished, (result) => result.id).map((result) => result.id)).toEqual([
      "c0",
      "c1",
      "c2",
      "c3",
    ]);
  });

  it("refuses a result of a call that is not in the plan", () => {
    const plan = planBatch(mixed.slice(0, 1), effective);
    expect(() => orderResults(plan, [{ id: "zz" }], (result) => result.id)).toThrow(
      expect.objectContaining({ code: "unknown_tool_call" }),
    );
  });
});

describe("planBatch properties", () => {
  const callArb = fc.record({
    name: fc.constantFrom(
      "read",
      "grep",
      "write",
      "get_state",
      "set_state",
      "list_state_keys",
      "shell_wait",
      "shell_exec",
      "nope",
      "apply_patch",
    ),
    path: fc.constantFrom("a", "b", "c"),
    key: fc.constantFrom("k1", "k2"),
    shell: fc.constantFrom("main", "other"),
  });
  const batchArb = fc.array(callArb, { maxLength: 25 }).map((specs) =>
    specs.map(
      (spec, index): ModelToolCall => ({
        id: `call_${index}`,
        name: spec.name,
        input:
          spec.name === "write"
            ? { path: spec.path, content: "x" }
            : spec.name === "shell_exec"
              ? { command: "ls", shell_id: spec.shell }
              : spec.name === "shell_wait"
                ? { shell_id: spec.shell }
                : spec.name === "list_state_keys"
                  ? {}
                  : spec.name.endsWith("_state")
                    ? { key: spec.key, value: 1 }
                    : spec.name === "grep"
                      ? { pattern: "x" }
                      : { path: spec.path },
      }),
    ),
  );

  it("is byte-identical whatever the order of the effective tools", () => {
    fc.assert(
      fc.property(batchArb, fc.nat(), (calls, seed) => {
        const shuffled = { ...effective, tools: rotate(effective.tools, seed) };
        expect(JSON.stringify(planBatch(calls, shuffled))).toBe(JSON.stringify(planBatch(calls, effective)));
      }),
    );
  });

  it("keeps the model's order, never puts conflicting keys in one group, isolates unsafe calls", () => {
    fc.assert(
      fc.property(batchArb, (calls) => {
        const plan = planBatch(calls, effective);
        const runIds = plan.calls.filter((call) => call.status === "run").map((call) => call.id);
        expect(plan.groups.flat()).toEqual(runIds);
        const byId = new Map(plan.calls.map((call) => [call.id, call]));
        for (const group of plan.groups) {
          const members = group.map((id) => byId.get(id));
          const keys = members.flatMap((call) =>
            call?.status === "run" && call.resourceKey ? [call.resourceKey] : [],
          );
          keys.forEach((key, i) => {
            for (const other of keys.slice(i + 1)) expect(keysConflict(key, other)).toBe(false);
          });
          const unsafe = members.filter(
            (call) => !effective.tools.find((tool) => tool.name === call?.name)?.parallelism.parallelSafe,
          );
          if (unsafe.length > 0) expect(group).toHaveLength(1);
        }
      }),
    );
  });
});

function rotate<T>(items: readonly T[], seed: number): T[] {
  const offset = items.length === 0 ? 0 : seed % items.length;
  return [...items.slice(offset), ...items.slice(0, offset)].reverse();
}
