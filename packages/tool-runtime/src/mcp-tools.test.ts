import {
  McpServers,
  McpUrlServerSpec,
  mcpServerSecrets,
  ToolName,
  type ToolPolicy,
} from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcpToolDefinitions, mcpToolName, reservedToolNameProblem, sessionMcpServers } from "./mcp-tools";
import { normalizeToolSchema } from "./schema-normalize";
import { sessionEffectiveTools } from "./session-tools";
import { mcpSession, platformSettings } from "./test-context";

const server = (fields: Record<string, unknown> = {}) =>
  McpUrlServerSpec.parse({ type: "url", name: "crm", url: "https://mcp.example.com/mcp", ...fields });

describe("MCP server specs", () => {
  it("default to always_ask with no headers, and reject what would break tool names or leak secrets", () => {
    expect(server()).toMatchObject({
      headers: {},
      call_timeout_ms: 60_000,
      default_config: { enabled: true },
      configs: [],
    });
    const problems = (value: unknown) =>
      McpServers.safeParse(value).error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ??
      [];
    expect(problems([{ type: "url", name: "a__b", url: "https://x.test/mcp" }])).toEqual([
      "0.name: MCP server names match ^[a-z][a-z0-9]*(_[a-z0-9]+)*$",
    ]);
    expect(problems([{ type: "url", name: "crm", url: "file:///etc/passwd" }])).toEqual([
      "0.url: an http(s) URL",
    ]);
    expect(
      problems([{ type: "url", name: "crm", url: "https://x.test", headers: { Authorization: "Bearer t" } }]),
    ).toHaveLength(1);
    expect(
      problems([{ type: "url", name: "crm", url: "https://x.test", headers: { Host: { secret: "t" } } }]),
    ).toEqual(["0.headers.Host: this header is set by the HTTP client"]);
    expect(problems([server(), server()])).toEqual([
      '1.name: two MCP servers are named "crm"; names must be unique',
    ]);
    expect(problems([{ type: "ws", name: "crm", url: "wss://x.test" }])).toHaveLength(1);
  });

  it("take stdio servers with a command, arguments and an environment from the vault only", () => {
    const parsed = McpServers.parse([
      {
        type: "stdio",
        name: "files",
        command: "node",
        args: ["server.js"],
        env: { TOKEN: { secret: "tok" } },
      },
    ]);
    expect(parsed[0]).toEqual({
      type: "stdio",
      name: "files",
      command: "node",
      args: ["server.js"],
      env: { TOKEN: { secret: "tok" } },
      default_config: { enabled: true },
      configs: [],
      call_timeout_ms: 60_000,
    });
    expect(parsed[0] && mcpServerSecrets(parsed[0])).toEqual([{ secret: "tok" }]);
    expect(McpServers.parse([{ type: "stdio", name: "bare", command: "srv" }])[0]).toMatchObject({
      args: [],
      env: {},
    });
    const problems = (value: unknown) =>
      McpServers.safeParse([
        { type: "stdio", name: "files", command: "node", ...(value as object) },
      ]).error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];
    expect(problems({ command: "" })).toEqual([
      "0.command: Too small: expected string to have >=1 characters",
    ]);
    expect(problems({ command: "no\0de" })).toEqual(["0.command: a command holds no NUL character"]);
    expect(problems({ args: ["a", "b\0"] })).toEqual(["0.args.1: an argument holds no NUL character"]);
    // A secret written inline is refused: environment values are vault references, like headers.
    expect(problems({ env: { TOKEN: "s3cret" } })).toHaveLength(1);
    expect(problems({ env: { TOKEN: "s3cret" } })[0]).toMatch(/^0\.env\.TOKEN: /);
    expect(problems({ env: { "BAD-NAME": { secret: "tok" } } })[0]).toMatch(/^0\.env\.BAD-NAME: /);
    expect(problems({ url: "https://x.test" })).toEqual(['0: Unrecognized key: "url"']);
  });
});

describe("per-tool MCP settings (default_config, configs)", () => {
  const problems = (fields: Record<string, unknown>) =>
    McpServers.safeParse([
      { type: "url", name: "crm", url: "https://x.test/mcp", ...fields },
    ]).error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];

  it("refuse a tool configured twice, a bad or namespaced tool name, unknown fields and a conflicting default", () => {
    expect(
      problems({ configs: [{ name: "find" }, { name: "delete" }, { name: "find", enabled: false }] }),
    ).toEqual(['0.configs.2.name: the tool "find" is configured twice; one config per tool']);
    expect(problems({ configs: [{ name: "" }] })).toEqual([
      "0.configs.0.name: 1 to 200 characters, no spaces",
    ]);
    expect(problems({ configs: [{ name: "find contact" }] })).toEqual([
      "0.configs.0.name: 1 to 200 characters, no spaces",
    ]);
    expect(problems({ configs: [{ name: "mcp__crm__find" }] })).toEqual([
      "0.configs.0.name: name the tool as the server lists it (find), not by its registry name (mcp__<server>__find)",
    ]);
    expect(problems({ configs: [{ name: "find", permission_policy: "sometimes" }] })).toHaveLength(1);
    expect(problems({ configs: [{ name: "find", enable: false }] })).toHaveLength(1);
    expect(problems({ default_config: { enabled: "no" } })).toHaveLength(1);
    expect(
      problems({ permission_policy: "always_allow", default_config: { permission_policy: "always_ask" } }),
    ).toEqual([
      "0.default_config.permission_policy: differs from the server's permission_policy (always_allow); set the default policy once",
    ]);
    expect(
      problems({ permission_policy: "always_allow", default_config: { permission_policy: "always_allow" } }),
    ).toEqual([]);
    expect(problems({ configs: [{ name: "Lookup.Record-v2", enabled: false }] })).toEqual([]);
  });

  const listing = {
    name: "crm",
    status: "ready" as const,
    tools: ["find", "delete", "Update-Record"].map((name) => ({ name, input_schema: { type: "object" } })),
  };
  const offered = (fields: Record<string, unknown>, owner: "agent" | "environment" = "agent") => {
    const spec = server(fields);
    const attached = owner === "agent" ? sessionMcpServers([spec], []) : sessionMcpServers([], [spec]);
    return mcpToolDefinitions(attached, [listing]);
  };
  const policies = (tools: ReadonlyArray<{ name: string; permissionPolicy: string }>) =>
    Object.fromEntries(tools.map((tool) => [tool.name, tool.permissionPolicy]));

  it("a tool's policy comes from its config, else default_config, else the server's permission_policy, else always_ask", () => {
    expect(policies(offered({}).tools)).toEqual({
      mcp__crm__find: "always_ask",
      mcp__crm__delete: "always_ask",
      [mcpToolName("crm", "Update-Record")]: "always_ask",
    });
    expect(
      policies(
        offered({
          permission_policy: "always_allow",
          configs: [{ name: "delete", permission_policy: "always_ask" }, { name: "Update-Record" }],
        }).tools,
      ),
    ).toEqual({
      mcp__crm__find: "always_allow",
      mcp__crm__delete: "always_ask",
      [mcpToolName("crm", "Update-Record")]: "always_allow",
    });
    expect(
      policies(
        offered({
          default_config: { permission_policy: "always_allow" },
          configs: [{ name: "Update-Record", permission_policy: "always_ask" }],
        }).tools,
      ),
    ).toEqual({
      mcp__crm__find: "always_allow",
      mcp__crm__delete: "always_allow",
      [mcpToolName("crm", "Update-Record")]: "always_ask",
    });
  });

  it("names the setting a tool's policy came from, for agent and environment servers", () => {
    const settings = (tools: ReadonlyArray<{ name: string; permissionSetting?: string }>) =>
      Object.fromEntries(tools.map((tool) => [tool.name, tool.permissionSetting]));
    expect(settings(offered({}).tools)).toEqual({
      mcp__crm__find: undefined,
      mcp__crm__delete: undefined,
      [mcpToolName("crm", "Update-Record")]: undefined,
    });
    expect(
      settings(
        offered({
          permission_policy: "always_allow",
          configs: [{ name: "delete", permission_policy: "always_ask" }, { name: "Update-Record" }],
        }).tools,
      ),
    ).toEqual({
      mcp__crm__find: 'permission_policy of the agent\'s MCP server "crm"',
      mcp__crm__delete: 'configs["delete"].permission_policy of the agent\'s MCP server "crm"',
      [mcpToolName("crm", "Update-Record")]: 'permission_policy of the agent\'s MCP server "crm"',
    });
    expect(
      settings(
        offered(
          {
            default_config: { permission_policy: "always_allow" },
            configs: [{ name: "Update-Record", permission_policy: "always_ask" }],
          },
          "environment",
        ).tools,
      ),
    ).toEqual({
      mcp__crm__find: 'default_config.permission_policy of the environment\'s MCP server "crm"',
      mcp__crm__delete: 'default_config.permission_policy of the environment\'s MCP server "crm"',
      [mcpToolName("crm", "Update-Record")]:
        'configs["Update-Record"].permission_policy of the environment\'s MCP server "crm"',
    });
  });

  it("leaves out a disabled tool, naming the setting, and reports a config for a tool the server does not list", () => {
    const { tools, excluded } = offered({
      configs: [
        { name: "delete", enabled: false },
        { name: "archive", permission_policy: "always_allow" },
      ],
    });
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      ["mcp__crm__find", mcpToolName("crm", "Update-Record")].sort(),
    );
    expect(excluded).toEqual([
      {
        tool: "mcp__crm__delete",
        step: "agent",
        rule: "mcp_config:crm/delete",
        reason: 'configs["delete"].enabled of the agent\'s MCP server "crm" is false',
      },
      {
        tool: "mcp__crm__archive",
        step: "agent",
        rule: "mcp_config:crm/archive",
        reason: 'configs["archive"] of the agent\'s MCP server "crm" names a tool the server does not list',
      },
    ]);
  });

  it("default_config.enabled false offers only the tools a config enables, for environment servers too", () => {
    const { tools, excluded } = offered(
      { default_config: { enabled: false }, configs: [{ name: "find", enabled: true }] },
      "environment",
    );
    expect(tools.map((tool) => tool.name)).toEqual(["mcp__crm__find"]);
    expect(excluded).toEqual([
      expect.objectContaining({
        tool: "mcp__crm__delete",
        step: "environment",
        rule: "mcp_config:crm/*",
        reason: 'default_config.enabled of the environment\'s MCP server "crm" is false',
      }),
      expect.objectContaining({ tool: mcpToolName("crm", "Update-Record"), step: "environment" }),
    ]);
  });

  it("says nothing about configs before the server is listed or while it is down", () => {
    const spec = server({ configs: [{ name: "archive", enabled: false }] });
    const down = { name: "crm", status: "unreachable" as const, reason: "down" };
    for (const listings of [[], [down]]) {
      expect(mcpToolDefinitions(sessionMcpServers([spec], []), listings).excluded).toEqual([
        expect.objectContaining({ tool: "mcp__crm__*", step: "runtime_gating" }),
      ]);
    }
  });

  it("a disabled tool is not offered through the pipeline and /tools explains it", () => {
    const effective = sessionEffectiveTools(
      mcpSession([server({ configs: [{ name: "delete", enabled: false }] })], [listing]),
      platformSettings,
    );
    expect(effective.tools.some((tool) => tool.name === "mcp__crm__delete")).toBe(false);
    expect(effective.excluded).toContainEqual(
      expect.objectContaining({ tool: "mcp__crm__delete", step: "agent", rule: "mcp_config:crm/delete" }),
    );
  });
});

describe("reservedToolNameProblem", () => {
  it("reserves the mcp__ prefix and nothing else", () => {
    expect(reservedToolNameProblem("mcp__crm__find")).toContain("reserved");
    expect(reservedToolNameProblem("mcp__x")).toContain("mcp__<server>__<tool>");
    expect(reservedToolNameProblem("mcp_lookup")).toBeNull();
    expect(reservedToolNameProblem("lookup")).toBeNull();
  });
});

describe("mcpToolName", () => {
  it("keeps a provider-safe name readable and rewrites others with a hash of the original", () => {
    expect(mcpToolName("crm", "find_contact")).toBe("mcp__crm__find_contact");
    expect(mcpToolName("crm", "Find-Contact")).toMatch(/^mcp__crm__find_contact_[0-9a-f]{8}$/);
    expect(mcpToolName("crm", "find-contact")).not.toBe(mcpToolName("crm", "find_contact"));
    expect(mcpToolName("crm", "x".repeat(80))).toHaveLength(64);
  });

  it("always gives a valid tool name, the same for the same pair and different for different tools (fast-check)", () => {
    const serverName = fc.stringMatching(/^[a-z][a-z0-9]{0,10}(_[a-z0-9]{1,5}){0,2}$/);
    fc.assert(
      fc.property(
        serverName,
        fc.string({ minLength: 1, maxLength: 120 }),
        fc.string({ minLength: 1, maxLength: 120 }),
        (s, a, b) => {
          const name = mcpToolName(s, a);
          expect(ToolName.safeParse(name).success).toBe(true);
          expect(name.startsWith(`mcp__${s}__`)).toBe(true);
          expect(mcpToolName(s, a)).toBe(name);
          if (a !== b) expect(mcpToolName(s, b)).not.toBe(name);
        },
      ),
    );
  });
});

describe("mcpToolDefinitions", () => {
  const listing = {
    name: "crm",
    status: "ready" as const,
    tools: [
      { name: "find", input_schema: { type: "object" }, read_only: true },
      {
        name: "delete",
        description: "Delete a contact.",
        input_schema: { type: "object" },
        idempotent: true,
      },
      { name: "find", input_schema: { type: "object" } },
    ],
  };

  it("maps annotations to effects, parallelism and idempotency, and keeps the server's policy", () => {
    const { tools, excluded } = mcpToolDefinitions(sessionMcpServers([server()], []), [listing]);
    expect(excluded).toEqual([]);
    expect(tools).toHaveLength(2);
    expect(tools[0]).toMatchObject({
      name: "mcp__crm__find",
      description: "The find tool of MCP server crm.",
      ownership: "mcp",
      executor: "mcp",
      group: "mcp",
      permissionPolicy: "always_ask",
      readOnly: true,
      destructive: false,
      idempotent: true,
      parallelism: { parallelSafe: true },
      mcpServerName: "crm",
      mcpToolName: "find",
    });
    expect(tools[1]).toMatchObject({
      readOnly: false,
      destructive: true,
      idempotent: true,
      parallelism: { parallelSafe: false },
    });
    const allowed = mcpToolDefinitions(
      sessionMcpServers([server({ permission_policy: "always_allow" })], []),
      [listing],
    ).tools;
    expect(allowed.every((tool) => tool.permissionPolicy === "always_allow")).toBe(true);
  });

  it("excludes the tools of an unlisted or unreachable server, and an environment server shadowed by the agent's", () => {
    const down = { name: "crm", status: "unreachable" as const, reason: "the call timed out" };
    expect(mcpToolDefinitions(sessionMcpServers([server()], []), []).excluded).toEqual([
      expect.objectContaining({ tool: "mcp__crm__*", step: "runtime_gating", rule: "mcp_server:crm" }),
    ]);
    expect(mcpToolDefinitions(sessionMcpServers([server()], []), [down]).excluded[0]?.reason).toBe(
      'MCP server "crm" could not be reached: the call timed out',
    );
    const shadowed = sessionMcpServers(
      [server()],
      [server({ url: "https://other.test/mcp" }), server({ name: "docs" })],
    );
    expect(shadowed.servers.map((entry) => [entry.name, entry.type === "url" && entry.url])).toEqual([
      ["crm", "https://mcp.example.com/mcp"],
      ["docs", "https://mcp.example.com/mcp"],
    ]);
    expect(shadowed.excluded).toEqual([
      expect.objectContaining({ step: "environment", rule: "mcp_server:crm" }),
    ]);
  });

  it("joins the effective set through the policy pipeline: deny by namespaced pattern, group:mcp", () => {
    const inputs = (toolPolicy: ToolPolicy) => mcpSession([server()], [listing], toolPolicy);
    const offered = sessionEffectiveTools(inputs({}), platformSettings);
    expect(offered.tools.filter((tool) => tool.ownership === "mcp").map((tool) => tool.name)).toEqual([
      "mcp__crm__delete",
      "mcp__crm__find",
    ]);
    const denied = sessionEffectiveTools(inputs({ deny: ["mcp__crm__del*"] }), platformSettings);
    expect(denied.excluded).toContainEqual(
      expect.objectContaining({ tool: "mcp__crm__delete", step: "agent" }),
    );
    const noMcp = sessionEffectiveTools(inputs({ deny: ["group:mcp"] }), platformSettings);
    expect(noMcp.tools.some((tool) => tool.group === "mcp")).toBe(false);
  });
});

describe("MCP schemas per provider (the cases OpenClaw reports breaking)", () => {
  // draft-07 `definitions` and an `anyOf` here; the e2e fixture's tool has `$defs` and `oneOf`.
  const schema = {
    type: "object",
    definitions: {
      byId: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
      byEmail: { properties: { email: { type: "string", format: "email" } }, required: ["email"] },
    },
    properties: {
      by: { anyOf: [{ $ref: "#/definitions/byId" }, { $ref: "#/definitions/byEmail" }] },
      when: { type: "string", format: "date" },
      anything: {},
    },
    required: ["by"],
  };

  it("inlines $ref/$defs for OpenAI and Gemini (Anthropic takes JSON Schema as is)", () => {
    for (const provider of ["openai", "gemini"] as const) {
      const text = JSON.stringify(normalizeToolSchema(schema, provider).schema);
      expect(text, provider).not.toMatch(/\$ref|\$defs|definitions/);
    }
  });

  it("gives Gemini no oneOf and no format it rejects, and OpenAI an object top level", () => {
    const gemini = JSON.stringify(normalizeToolSchema(schema, "gemini").schema);
    expect(gemini).not.toMatch(/anyOf|oneOf|"format":"(email|date)"/);
    expect(normalizeToolSchema({ properties: { q: { type: "string" } } }, "openai").schema.type).toBe(
      "object",
    );
    expect(normalizeToolSchema({ properties: { q: { type: "string" } } }, "gemini").schema.type).toBe(
      "object",
    );
  });
});
