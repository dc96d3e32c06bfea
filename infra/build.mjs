// `npm run build`: compiles every service and operator CLI to plain JavaScript, one ESM bundle per
// entry point, run with `node --enable-source-maps <out>.js` (no tsx, no TypeScript at run time).
//
// Why esbuild bundles and not tsc: internal packages export their TypeScript source (tests and dev
// runs need no build step), so tsc would have to emit every package and rewrite each `exports` map to
// point at its output. Bundling inlines the @wakeloop/* packages into each entry point instead and
// leaves every third-party package external, so the production `node_modules` (npm ci --omit=dev)
// serves them exactly as in development. Type checking stays `npm run typecheck`; this only emits.
import { cp, rm } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const APPS = ["gateway", "orchestrator", "harness-worker", "sandbox-runner", "memory-retrieval"];

// dist/ mirrors src/: `<dir>/src/<path>.ts` runs as `<dir>/dist/<path>.js`.
const entryPoints = [
  ...APPS.map((app) => `apps/${app}/src/main.ts`),
  "apps/gateway/src/cli/create-tenant.ts",
  "packages/db/src/migrate-cli.ts",
].map((source) => ({ in: source, out: source.replace("/src/", "/dist/").replace(/\.ts$/, "") }));

// Files read at run time relative to the module (`new URL("./agent/", import.meta.url)`): the bundle
// is dist/main.js, so they are copied to the same place relative to dist/ as they have to src/.
const RUNTIME_FILES = [{ from: "apps/sandbox-runner/src/agent", to: "apps/sandbox-runner/dist/agent" }];

/** Internal packages are inlined; every other bare import (a package in node_modules) stays external. */
const externalThirdParty = {
  name: "external-third-party",
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@wakeloop/") ? undefined : { path: args.path, external: true },
    );
  },
};

const outDirs = new Set(entryPoints.map((entry) => join(root, entry.out.split("/dist/")[0], "dist")));
await Promise.all([...outDirs].map((dir) => rm(dir, { recursive: true, force: true })));

const started = performance.now();
await build({
  absWorkingDir: root,
  entryPoints,
  outdir: root,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  // Bundling renames clashing top-level names; keep `.name` of classes and functions as in source
  // (error classes and logs use it).
  keepNames: true,
  plugins: [externalThirdParty],
  logLevel: "warning",
});
for (const { from, to } of RUNTIME_FILES) {
  await cp(join(root, from), join(root, to), {
    recursive: true,
    filter: (source) => !source.endsWith(".test.ts"),
  });
}
console.log(`built ${entryPoints.length} entry points in ${Math.round(performance.now() - started)} ms`);
