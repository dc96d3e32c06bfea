import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

// The in-container agent is a handful of CommonJS files (src/agent/*.cjs) that run on the image's
// Node. They are joined into ONE program passed as `node -e <program>`, so the runner (not the image)
// owns the agent: any image with node >= 18 can be a sandbox, and a runner upgrade ships its agent.

const agentDir = new URL("./agent/", import.meta.url);

export type AgentProgram = {
  source: string;
  /** Changes whenever the agent changes; warm containers built from another version are replaced. */
  version: string;
};

let cached: AgentProgram | undefined;

export function agentProgram(): AgentProgram {
  if (cached) return cached;
  const modules = readdirSync(agentDir)
    .filter((name) => name.endsWith(".cjs"))
    .sort()
    .map((name) => {
      const body = readFileSync(new URL(name, agentDir), "utf8");
      const key = JSON.stringify(`./${name.slice(0, -".cjs".length)}`);
      return `${key}: function (module, exports, require) {\n${body}\n}`;
    });
  const source = [
    '"use strict";',
    `const __modules = {\n${modules.join(",\n")}\n};`,
    "const __cache = {};",
    "function __require(name) {",
    "  const factory = __modules[name];",
    "  if (factory === undefined) return require(name);",
    "  if (!__cache[name]) {",
    "    const module = { exports: {} };",
    "    __cache[name] = module;",
    "    factory(module, module.exports, __require);",
    "  }",
    "  return __cache[name].exports;",
    "}",
    '__require("./main");',
  ].join("\n");
  const version = createHash("sha256").update(source).digest("hex").slice(0, 16);
  cached = { source, version };
  return cached;
}
