import type { ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { managedTools } from "./builtins";
import { agentToolRegistry, type CustomToolSpec, createToolRegistry, customToolDefinition } from "./registry";

const lookup: CustomToolSpec = {
  type: "custom",
  name: "lookup_order",
  description: "Look an order up in the shop",
  input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
};

describe("agentToolRegistry", () => {
  it("holds the managed built-ins with no set-up, sorted by name", () => {
    const registry = agentToolRegistry({ tools: [] });
    const names = registry.tools.map((tool) => tool.name);
    expect(names).toEqual([...names].sort());
    for (const name of ["get_state", "set_state", "delete_state", "list_state_keys", "ask_user"]) {
      expect(registry.byName.get(name)?.ownership).toBe("managed");
    }
    expect(registry.byName.get("permissions_check")?.executor).toBe("inline");
    expect(registry.tools.length).toBe(managedTools.length);
  });

  it("adds custom tools as client-executed, custom-owned tools", () => {
    const registry = agentToolRegistry({ tools: [lookup] });
    expect(registry.byName.get("lookup_order")).toMatchObject({
      ownership: "custom",
      executor: "client",
      group: "custom",
      pauses: "client_result",
      inputSchema: lookup.input_schema,
    });
  });

  it("rejects a custom tool that reuses a managed name", () => {
    const clash: CustomToolSpec = { ...lookup, name: "read" };
    expect(() => agentToolRegistry({ tools: [clash] })).toThrow(
      expect.objectContaining({ code: "tool_name_conflict" }),
    );
  });

  it("rejects an invalid definition", () => {
    const bad = { ...customToolDefinition(lookup), name: "Bad-Name" } as ToolDefinition;
    expect(() => createToolRegistry([bad])).toThrow(
      expect.objectContaining({ code: "invalid_tool_definition" }),
    );
  });
});

describe("managed built-ins", () => {
  it("export JSON Schema inputs with an object at the top", () => {
    for (const tool of managedTools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
    }
  });

  // Their definitions go out with every model request (~60 kB for the default set). One non-ASCII
  // character makes the whole body a two-byte string to whoever decodes it in JavaScript: our fake
  // model's decode and parse of a request took twice the CPU for a single "…" in one description.
  it("are written in ASCII, descriptions and schemas", () => {
    for (const tool of managedTools) {
      const text = JSON.stringify([tool.description, tool.inputSchema]);
      // JSON text escapes control characters, so anything outside printable ASCII is non-ASCII.
      expect(text.match(/[^ -~]/g), tool.name).toBeNull();
    }
  });

  it("ask_user pauses and is fulfilled by the client", () => {
    const askUser = managedTools.find((tool) => tool.name === "ask_user");
    expect(askUser).toMatchObject({ pauses: "ask_user", executor: "client", group: "messaging" });
  });

  it("state tools are inline, grouped as state, and keyed per state key", () => {
    const state = managedTools.filter((tool) => tool.group === "state");
    expect(state.map((tool) => tool.name).sort()).toEqual([
      "delete_state",
      "get_state",
      "list_state_keys",
      "set_state",
    ]);
    for (const tool of state) expect(tool.executor).toBe("inline");
    expect(state.find((tool) => tool.name === "set_state")?.readOnly).toBe(false);
    expect(state.find((tool) => tool.name === "get_state")?.parallelism).toEqual({
      parallelSafe: true,
      resourceKey: "state:{key}",
    });
  });

  it("sandbox tools need a ready sandbox", () => {
    const sandbox = managedTools.filter((tool) => tool.executor === "sandbox");
    expect(sandbox.length).toBeGreaterThan(0);
    for (const tool of sandbox) expect(tool.availability).toContain("sandbox.ready");
  });
});
