import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { agentCodeTools } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentCodeScope, runAgentCodeTool } from "./agent-code-tools";
import type { ToolOutcome } from "./tool-outcome";

// Each management tool's validation and guardrails against real Postgres: a refused save stores no
// version, an accepted one is exactly what the read tools return.

let testDb: TestDatabase;
let seeded: SeededAgent;
let scope: AgentCodeScope;
let calls = 0;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
  seeded = await seedAgent(testDb.db);
  const session = await seedSession(testDb.db, seeded);
  scope = { tenantId: seeded.tenantId, agentId: seeded.agentId, sessionId: session.id };
});
afterAll(() => testDb.drop());

async function call(name: string, input: Record<string, unknown>): Promise<ToolOutcome> {
  const tool = agentCodeTools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  calls += 1;
  const outcome = await runAgentCodeTool(testDb.appDb, scope, { id: `sevt_${calls}`, tool, input });
  if (outcome === null) throw new Error(`${name} returned no outcome`);
  return outcome;
}

const text = (outcome: ToolOutcome) =>
  outcome.content.map((block) => ("text" in block ? block.text : "")).join("");

async function versions(name: string): Promise<number> {
  const rows = await testDb.db
    .selectFrom("agent_code_versions as v")
    .innerJoin("agent_code as c", "c.id", "v.code_id")
    .where("c.name", "=", name)
    .where("c.agent_id", "=", seeded.agentId)
    .select("v.version")
    .execute();
  return rows.length;
}

const schema = { type: "object", properties: { n: { type: "number" } } };

describe("tool management", () => {
  it("create_tool refuses bad names, schemas and code with a clear error and stores nothing", async () => {
    const base = { name: "good_name", description: "d", parameter_schema: schema, code: "return 1;" };
    const refusals = [
      await call("create_tool", { ...base, name: "Bad-Name" }),
      await call("create_tool", { ...base, parameter_schema: { type: "array" } }),
      await call("create_tool", { ...base, code: "return {" }),
      await call("create_tool", { ...base, code: undefined }),
      await call("create_tool", { ...base, description: " " }),
      await call("create_tool", { ...base, name: "mcp__crm__find" }),
    ];
    expect(refusals.map((outcome) => outcome.isError)).toEqual([true, true, true, true, true, true]);
    expect(text(refusals[0] as ToolOutcome)).toMatch(
      /^create_tool: "Bad-Name" is not a valid name: use snake_case/,
    );
    expect(text(refusals[1] as ToolOutcome)).toMatch(
      /^create_tool: parameter_schema is not a usable JSON Schema/,
    );
    expect(text(refusals[2] as ToolOutcome)).toMatch(
      /^create_tool: code does not parse: Unexpected token \(1:8\)/,
    );
    expect(text(refusals[3] as ToolOutcome)).toMatch(/^create_tool: ✖ Invalid input[\s\S]*→ at code/);
    expect(text(refusals[4] as ToolOutcome)).toBe("create_tool: description is empty");
    expect(text(refusals[5] as ToolOutcome)).toMatch(
      /^create_tool: "mcp__crm__find" is reserved: names starting with mcp__ belong to the tools of MCP servers/,
    );
    expect(await versions("good_name")).toBe(0);
    expect(await versions("mcp__crm__find")).toBe(0);
  });

  it("create, update (partial), read, list, disable, enable and delete, each version kept", async () => {
    expect(
      (
        await call("create_tool", {
          name: "adder",
          description: "adds",
          parameter_schema: schema,
          code: "return args.n + 1;",
        })
      ).result,
    ).toEqual({ name: "adder", version: 1 });
    const taken = await call("create_tool", {
      name: "adder",
      description: "again",
      parameter_schema: schema,
      code: "return 0;",
    });
    expect(text(taken)).toBe('a tool named "adder" already exists; change it with update_tool');
    // A refused update stores no version and leaves the current one as it was.
    expect(text(await call("update_tool", { name: "adder", code: "return (" }))).toMatch(
      /code does not parse/,
    );
    expect(text(await call("update_tool", { name: "missing", code: "return 1;" }))).toBe(
      'no tool named "missing"; list_tools shows what exists',
    );
    expect((await call("update_tool", { name: "adder", code: "return args.n + 2;" })).result).toEqual({
      name: "adder",
      version: 2,
    });
    expect((await call("read_tool", { name: "adder" })).result).toEqual({
      name: "adder",
      description: "adds",
      parameter_schema: schema,
      code: "return args.n + 2;",
      enabled: true,
      version: 2,
    });
    expect((await call("disable_tool", { name: "adder" })).result).toEqual({ name: "adder", enabled: false });
    expect((await call("list_tools", {})).result).toEqual({ tools: [] });
    expect((await call("list_tools", { include_disabled: true })).result).toEqual({
      tools: [{ name: "adder", description: "adds", enabled: false, version: 2 }],
    });
    expect((await call("enable_tool", { name: "adder" })).result).toEqual({ name: "adder", enabled: true });
    expect(text(await call("enable_tool", { name: "nope" }))).toMatch(/^no tool named "nope"/);
    expect((await call("delete_tool", { name: "adder" })).result).toEqual({ deleted: true });
    expect((await call("delete_tool", { name: "adder" })).result).toEqual({ deleted: false });
    expect(await versions("adder")).toBe(2);
  });
});

describe("libraries and UI components", () => {
  it("libraries parse as CommonJS and components as JSX; reads return the reference's fields", async () => {
    expect(
      text(await call("create_library", { name: "lib_a", description: "a", code: "return 1;" })),
    ).toMatch(/^create_library: code does not parse: 'return' outside of function/);
    expect(
      (await call("create_library", { name: "lib_a", description: "a", code: "exports.one = 1;" })).result,
    ).toEqual({
      name: "lib_a",
      version: 1,
    });
    expect((await call("update_library", { name: "lib_a", description: "the a library" })).result).toEqual({
      name: "lib_a",
      version: 2,
    });
    expect((await call("read_library", { name: "lib_a" })).result).toEqual({
      name: "lib_a",
      description: "the a library",
      code: "exports.one = 1;",
      version: 2,
    });
    expect((await call("list_libraries", {})).result).toEqual({
      libraries: [{ name: "lib_a", description: "the a library", version: 2 }],
    });
    const component = { name: "card", description: "c", code: "export default () => <div>hi</div>;" };
    expect((await call("create_ui_component", component)).result).toEqual({ name: "card", version: 1 });
    expect(text(await call("update_ui_component", { name: "card", props_schema: { type: 3 } }))).toMatch(
      /props_schema is not a usable JSON Schema/,
    );
    expect((await call("read_ui_component", { name: "card" })).result).toEqual({
      ...component,
      props_schema: null,
      version: 1,
    });
    expect((await call("delete_ui_component", { name: "card" })).result).toEqual({ deleted: true });
    expect((await call("list_ui_components", {})).result).toEqual({ components: [] });
  });
});
