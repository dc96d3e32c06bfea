import { createHash } from "node:crypto";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { agentProgram } from "./agent-program";

describe("agentProgram", () => {
  const program = agentProgram();

  it("is one CommonJS program that needs nothing but Node's own modules", () => {
    // A script, not a module: `import`/`export` would not compile here, as they would not under `node -e`.
    expect(() => new Script(program.source)).not.toThrow();
    const required = [...program.source.matchAll(/\brequire\("([^"]+)"\)/g)].map((match) => match[1]);
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !name?.startsWith("node:"))).toEqual([]);
    // The protocol's schemas stay on the runner's side: no zod in the container.
    expect(program.source).not.toMatch(/\bzod\b|ZodObject/);
  });

  it("is built once, with a version that is the hash of its source", () => {
    expect(agentProgram()).toBe(program);
    expect(program.version).toBe(createHash("sha256").update(program.source).digest("hex").slice(0, 16));
  });
});
