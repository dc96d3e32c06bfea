import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { WakeloopError } from "@wakeloop/contracts";
import { buildSync } from "esbuild";

// The in-container agent is TypeScript (src/agent/*.ts, typechecked with the rest of the tree). esbuild
// bundles it, in memory and once per runner process, into ONE CommonJS program passed as
// `node -e <program>`, so the runner (not the image) owns the agent: any image with node >= 18 can be a
// sandbox, and a runner upgrade ships its agent. The agent shares the protocol's types with the runner
// but no code: the bundle may require nothing but Node's own modules (checked below).

/**
 * The entry point: beside this module when the runner runs from source (src/), or compiled beside it
 * (a build that emits src/agent/*.ts as dist/agent/*.js), or in the package's src/ when the runner
 * runs from a bundle in a sibling directory (dist/main.js); the sources ship with the package.
 */
const ENTRY_CANDIDATES = ["./agent/main.ts", "./agent/main.js", "../src/agent/main.ts"].map((path) =>
  fileURLToPath(new URL(path, import.meta.url)),
);

/** Debian bookworm's node, the oldest a sandbox image is expected to have. */
const TARGET = "node18";

export type AgentProgram = {
  source: string;
  /** Changes whenever the agent changes; warm containers built from another version are replaced. */
  version: string;
};

let cached: AgentProgram | undefined;

export function agentProgram(): AgentProgram {
  if (cached) return cached;
  const entry = ENTRY_CANDIDATES.find((path) => existsSync(path));
  if (entry === undefined) {
    throw new WakeloopError(
      "sandbox_agent_missing",
      `the sandbox agent's sources are not at ${ENTRY_CANDIDATES.join(" or ")}`,
    );
  }
  const built = buildSync({
    entryPoints: [entry],
    // The bundle names its files relative to this directory (the package): the version must not
    // depend on where the runner was started.
    absWorkingDir: dirname(dirname(dirname(entry))),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: TARGET,
    // Anything that is not a Node built-in would be missing in the container; keep it visible here.
    packages: "external",
    write: false,
    metafile: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const [output] = built.outputFiles;
  const imports = Object.values(built.metafile.outputs).flatMap((file) => file.imports);
  const foreign = imports.filter((imported) => !imported.path.startsWith("node:"));
  if (output === undefined || foreign.length > 0) {
    throw new WakeloopError(
      "sandbox_agent_invalid",
      `the sandbox agent may use only node: modules, not ${foreign.map((imported) => imported.path).join(", ")}`,
    );
  }
  const source = output.text;
  const version = createHash("sha256").update(source).digest("hex").slice(0, 16);
  cached = { source, version };
  return cached;
}
