import { MAX_UI_BLOCKS_CHARS, RenderBlocksInput } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { checkInput } from "../input-validation";
import { providerTools } from "../schema-normalize";
import { clientUiCallProblem, uiTools } from "./ui";

const schemaOf = (name: string) => {
  const tool = uiTools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool.inputSchema;
};

const everyKind = [
  { type: "markdown", content: "# Report" },
  { type: "table", columns: [{ key: "city", label: "City" }], data: [{ city: "Lyon" }, { city: null }] },
  { type: "chart", chartType: "bar", data: { labels: ["a"], values: [1] } },
  {
    type: "form",
    fields: [
      { name: "when", label: "When", type: "date", required: true },
      { name: "size", label: "Size", type: "select", options: ["S", "M"], default: "M" },
    ],
    submitLabel: "Book",
  },
  { type: "code", language: "ts", content: "let x = 1;" },
  { type: "image", url: "https://example.org/a.png", alt: "a" },
  { type: "alert", variant: "warning", content: "Careful" },
  { type: "json", data: { nested: [1, 2, { deep: true }] } },
];

describe("UI tool inputs", () => {
  it("accept every block kind of the reference, in the planner's schema and in zod", () => {
    for (const name of ["render_blocks", "render_and_wait"]) {
      expect(checkInput(schemaOf(name), { blocks: everyKind, title: "All" })).toEqual({ ok: true });
    }
    expect(RenderBlocksInput.parse({ blocks: everyKind }).blocks).toHaveLength(8);
    expect(checkInput(schemaOf("send_message"), { text: "Halfway there" })).toEqual({ ok: true });
  });

  it("refuse unknown kinds, missing fields, bad values and oversized parts before anything is shown", () => {
    const refused = [
      { blocks: [] },
      { blocks: [{ type: "video", url: "https://example.org/v.mp4" }] },
      { blocks: [{ type: "table", columns: [], data: [] }] },
      { blocks: [{ type: "chart", chartType: "radar", data: {} }] },
      { blocks: [{ type: "form", fields: [{ name: "a b", label: "A", type: "text" }], submitLabel: "Go" }] },
      { blocks: [{ type: "alert", variant: "info", content: "x".repeat(4_001) }] },
      { blocks: Array.from({ length: 51 }, () => ({ type: "markdown", content: "x" })) },
      { blocks: [{ type: "markdown", content: "x" }], title: "t".repeat(201) },
    ];
    for (const input of refused) {
      expect(checkInput(schemaOf("render_blocks"), input).ok).toBe(false);
      expect(RenderBlocksInput.safeParse(input).success).toBe(false);
    }
    expect(
      RenderBlocksInput.safeParse({ blocks: [{ type: "image", url: "javascript:alert(1)" }] }).success,
    ).toBe(false);
    expect(checkInput(schemaOf("send_message"), { text: "" }).ok).toBe(false);
    expect(checkInput(schemaOf("send_message"), { text: "x".repeat(20_001) }).ok).toBe(false);
  });

  it("bound the blocks' total size, which render_and_wait checks when the call is planned", () => {
    const big = { type: "json", data: "x".repeat(MAX_UI_BLOCKS_CHARS) };
    expect(checkInput(schemaOf("render_and_wait"), { blocks: [big] })).toEqual({ ok: true });
    expect(clientUiCallProblem("render_and_wait", { blocks: [big] })).toContain(
      `under ${MAX_UI_BLOCKS_CHARS} characters`,
    );
    expect(clientUiCallProblem("render_and_wait", { blocks: everyKind })).toBeNull();
    expect(clientUiCallProblem("ask_user", { blocks: [big] })).toBeNull();
  });

  it("render_and_wait takes the reference's component or inline code with props, or blocks: exactly one", () => {
    const accepted = [
      { component: "booking_form", props: { nights: 2 }, title: "Book" },
      {
        code: "export default function Pick({ callTool }) { return <button onClick={() => callTool('ok', {})}>OK</button>; }",
      },
      { blocks: everyKind },
    ];
    for (const input of accepted) {
      expect(checkInput(schemaOf("render_and_wait"), input)).toEqual({ ok: true });
      expect(clientUiCallProblem("render_and_wait", input)).toBeNull();
    }
    expect(clientUiCallProblem("render_and_wait", {})).toContain("exactly one of component, code or blocks");
    expect(clientUiCallProblem("render_and_wait", { component: "a", code: "export default 1" })).toContain(
      "exactly one of component, code or blocks",
    );
    expect(clientUiCallProblem("render_and_wait", { blocks: everyKind, props: { a: 1 } })).toContain(
      "props go with component or code",
    );
    expect(clientUiCallProblem("render_and_wait", { component: "Not A Name" })).not.toBeNull();
    expect(clientUiCallProblem("render_and_wait", { code: "export default () => <div>" })).toContain(
      "code does not parse",
    );
  });

  it("render_and_wait pauses for the client; send_message and render_blocks run in the worker, in order", () => {
    const byName = new Map(uiTools.map((tool) => [tool.name, tool]));
    expect(byName.get("render_and_wait")).toMatchObject({ executor: "client", pauses: "client_result" });
    for (const name of ["send_message", "render_blocks"]) {
      expect(byName.get(name)).toMatchObject({
        executor: "inline",
        permissionPolicy: "always_allow",
        parallelism: { parallelSafe: false, resourceKey: "ui" },
      });
    }
  });

  it("normalize for every provider, so offering them never breaks a model request", () => {
    for (const provider of ["anthropic", "openai", "gemini"] as const) {
      const tools = providerTools(uiTools, provider);
      expect(tools.map((tool) => tool.name)).toEqual(["send_message", "render_blocks", "render_and_wait"]);
      for (const tool of tools) expect(tool.inputSchema.type).toBe("object");
    }
  });
});
