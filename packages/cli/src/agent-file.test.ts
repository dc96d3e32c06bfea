import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseAgentSpec, readAgentFile } from "./agent-file";
import { CliError } from "./errors";

const valid = `
name: helper
model:
  provider: openai_compatible
  id: fake-gpt
  base_url: http://127.0.0.1:9999/v1
system: You help.
tools:
  - type: builtin
    configs:
      - name: set_state
        permission_policy: always_ask
`;

function failure(text: string): CliError {
  try {
    parseAgentSpec(text, "agent.yaml");
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("expected the spec to be refused");
}

describe("parseAgentSpec", () => {
  it("reads a YAML agent as the API takes it", () => {
    expect(parseAgentSpec(valid, "agent.yaml")).toEqual({
      name: "helper",
      model: { provider: "openai_compatible", id: "fake-gpt", base_url: "http://127.0.0.1:9999/v1" },
      system: "You help.",
      tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
    });
  });

  it("reads the example agent the README uses", async () => {
    const example = join(import.meta.dirname, "..", "..", "..", "examples", "agent.yaml");
    expect(await readAgentFile(example, new PassThrough())).toMatchObject({ name: "helper" });
  });

  it("reads standard input for -", async () => {
    const stdin = new PassThrough();
    stdin.end("name: piped\nmodel: {provider: anthropic, id: m}\n");
    expect(await readAgentFile("-", stdin)).toMatchObject({ name: "piped" });
  });

  it("reads JSON too, since JSON is YAML", () => {
    expect(parseAgentSpec('{"name":"j","model":{"provider":"anthropic","id":"m"}}', "a.json")).toMatchObject({
      name: "j",
    });
  });

  it("names the field path of every invalid field", () => {
    const error = failure(
      "name: x\nmodel:\n  provider: nope\n  id: m\ntools:\n  - type: builtin\n    configs: [{name: Bad}]\n",
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain("agent.yaml is not a valid agent");
    expect(error.message).toMatch(/^ {2}model\.provider: /m);
    expect(error.message).toMatch(/^ {2}tools\[0\]\.configs\[0\]\.name: /m);
  });

  it("refuses fields the API does not know, by path", () => {
    expect(failure("name: x\nmodel: {provider: anthropic, id: m, tempreature: 1}\n").message).toMatch(
      /model: .*tempreature/,
    );
  });

  it("reports broken YAML with its line, and a document that is not a mapping", () => {
    expect(failure("name: [x\n").message).toMatch(/not valid YAML:\n.*line 2/);
    expect(failure("- just\n- a list\n").message).toContain("must be a YAML mapping");
    expect(failure("").message).toContain("must be a YAML mapping");
  });
});
