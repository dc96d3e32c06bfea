import { AgentSpec } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { AGENT_CODE_LIMITS, agentCodeNameProblem, checkAgentCode, libraryClosure } from "./agent-code";
import { agentDefinedToolDefinition, agentToolName, storedAgentToolName } from "./agent-defined-tools";
import { agentCodeTools } from "./builtins/agent-code";
import { checkInput } from "./input-validation";
import { createToolRegistry } from "./registry";
import { type SessionToolInputs, sessionEffectiveTools } from "./session-tools";

const objectSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

describe("agent code names", () => {
  it("accepts snake_case up to 48 characters and refuses everything else with the rule", () => {
    expect(agentCodeNameProblem("double_it")).toBeNull();
    expect(agentCodeNameProblem(`a${"b".repeat(47)}`)).toBeNull();
    for (const bad of ["", "Double", "1st", "with-dash", "with space", `a${"b".repeat(48)}`, "ünï"]) {
      expect(agentCodeNameProblem(bad)).toMatch(/snake_case/);
    }
  });
});

describe("checkAgentCode", () => {
  const tool = { kind: "tool" as const, description: "doubles n", schema: objectSchema };

  it("parses a tool body with top-level return and await, and lists the libraries it requires", () => {
    const check = checkAgentCode({
      ...tool,
      code: 'const m = require("math_utils");\nconst fs = require("fs");\nawait null;\nreturn m.double(args.n) + require("strings").x;',
    });
    // Node's own `fs` is a valid name too; staging skips names that are no library.
    expect(check).toEqual({ ok: true, requires: ["fs", "math_utils", "strings"] });
  });

  it("refuses code that does not parse, with the parser's position, and never runs it", () => {
    const check = checkAgentCode({ ...tool, code: "globalThis.ran = true; return (" });
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toMatch(/^code does not parse: .*\(1:\d+\)/);
    expect((globalThis as { ran?: boolean }).ran).toBeUndefined();
  });

  it("parses a library as a CommonJS script (no top-level return) and a component as JSX", () => {
    const library = { kind: "library" as const, description: "math", schema: null };
    expect(checkAgentCode({ ...library, code: "exports.double = (n) => 2 * n;" })).toEqual({
      ok: true,
      requires: [],
    });
    expect(checkAgentCode({ ...library, code: "return 1;" }).ok).toBe(false);
    const component = { kind: "ui_component" as const, description: "card", schema: null };
    expect(
      checkAgentCode({
        ...component,
        code: "export default function Card(props) { return <b>{props.title}</b>; }",
      }),
    ).toEqual({ ok: true, requires: [] });
    expect(checkAgentCode({ ...component, code: "export default () => <b>" }).ok).toBe(false);
  });

  it("refuses empty or oversized code and descriptions, and schemas that are not usable", () => {
    const messages = [
      checkAgentCode({ ...tool, code: "  " }),
      checkAgentCode({ ...tool, code: `return ${"1+".repeat(AGENT_CODE_LIMITS.codeChars)}1;` }),
      checkAgentCode({ ...tool, description: "", code: "return 1;" }),
      checkAgentCode({ ...tool, description: "d".repeat(1_001), code: "return 1;" }),
      checkAgentCode({ ...tool, schema: { type: "string" }, code: "return 1;" }),
      checkAgentCode({
        ...tool,
        schema: { type: "object", properties: { n: { type: 12 } } },
        code: "return 1;",
      }),
    ].map((check) => (check.ok ? "ok" : check.message));
    expect(messages[0]).toBe("code is empty");
    expect(messages[1]).toMatch(/^code is \d+ characters; at most 16000/);
    expect(messages[2]).toBe("description is empty");
    expect(messages[3]).toMatch(/^description is 1001 characters/);
    expect(messages[4]).toMatch(/^parameter_schema is not a usable JSON Schema: .*"type": "object"/);
    expect(messages[5]).toMatch(/^parameter_schema is not a usable JSON Schema/);
  });
});

describe("libraryClosure", () => {
  it("follows requires between libraries once each, skipping names that are no library", () => {
    const libraries = new Map([
      ["a", { requires: ["b", "fs"] }],
      ["b", { requires: ["a", "c"] }],
      ["c", { requires: [] }],
      ["unused", { requires: [] }],
    ]);
    expect(libraryClosure(["a"], libraries)).toEqual(["a", "b", "c"]);
    expect(libraryClosure(["fs"], libraries)).toEqual([]);
  });
});

describe("agent-defined tools in the registry", () => {
  const spec = {
    name: "double_it",
    description: "Doubles",
    parameterSchema: objectSchema,
    version: 3,
    enabled: true,
  };

  it("are namespaced so they cannot shadow a built-in, and ask before running by default", () => {
    const definition = agentDefinedToolDefinition({ ...spec, name: "read" });
    expect(definition.name).toBe("agent__read");
    expect(storedAgentToolName(definition.name)).toBe("read");
    expect(storedAgentToolName("read")).toBeNull();
    expect(() => createToolRegistry([...agentCodeTools, definition])).not.toThrow();
    expect(definition).toMatchObject({
      ownership: "agent",
      permissionPolicy: "always_ask",
      executor: "sandbox",
      availability: ["sandbox.ready"],
      group: "agent_tools",
    });
  });

  it("are offered while enabled and excluded with the reason while disabled", () => {
    const inputs: SessionToolInputs = {
      agent: AgentSpec.parse({ name: "a", model: { provider: "anthropic", id: "m" } }),
      environmentPolicy: null,
      depth: 0,
      childCount: 0,
      sandboxStatus: "ready",
      memoryReady: true,
      agentTools: [],
      revealedTools: [],
      sandboxImage: null,
      environmentMcpServers: [],
      mcpListings: [],
    };
    const settings = {
      globalToolPolicy: {},
      maxSubSessionDepth: 3,
      webSearch: false,
      maxChildrenPerSession: 10,
      browserImages: [],
    };
    const on = sessionEffectiveTools({ ...inputs, agentTools: [spec] }, settings);
    expect(on.tools.find((tool) => tool.name === agentToolName("double_it"))?.permissionPolicy).toBe(
      "always_ask",
    );
    const off = sessionEffectiveTools({ ...inputs, agentTools: [{ ...spec, enabled: false }] }, settings);
    expect(off.tools.some((tool) => tool.name === "agent__double_it")).toBe(false);
    expect(off.excluded).toContainEqual({
      tool: "agent__double_it",
      step: "agent",
      rule: "agent_tools.disabled:double_it",
      reason: "disabled by the agent (disable_tool); enable_tool offers it again from the next wake",
    });
    const gated = sessionEffectiveTools({ ...inputs, sandboxStatus: null, agentTools: [spec] }, settings);
    expect(gated.excluded.find((entry) => entry.tool === "agent__double_it")?.step).toBe("runtime_gating");
  });
});

describe("management tool inputs", () => {
  const schemaOf = (name: string) => {
    const tool = agentCodeTools.find((candidate) => candidate.name === name);
    if (tool === undefined) throw new Error(`no tool ${name}`);
    return tool;
  };

  it("follow the reference's required fields and default policies", () => {
    expect(
      checkInput(schemaOf("create_tool").inputSchema, {
        name: "x",
        description: "d",
        parameter_schema: {},
        code: "return 1",
      }),
    ).toEqual({ ok: true });
    expect(checkInput(schemaOf("create_tool").inputSchema, { name: "x", description: "d" }).ok).toBe(false);
    expect(checkInput(schemaOf("update_library").inputSchema, { name: "x" })).toEqual({ ok: true });
    expect(checkInput(schemaOf("list_tools").inputSchema, {})).toEqual({ ok: true });
    const asking = agentCodeTools
      .filter((tool) => tool.permissionPolicy === "always_ask")
      .map((tool) => tool.name);
    expect(asking.sort()).toEqual(["create_library", "create_tool", "update_library", "update_tool"]);
    expect(agentCodeTools.filter((tool) => tool.readOnly).map((tool) => tool.name)).toEqual([
      "list_tools",
      "read_tool",
      "list_libraries",
      "read_library",
      "list_ui_components",
      "read_ui_component",
    ]);
  });
});
