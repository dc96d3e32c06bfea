// `npm run build`: compiles every service and operator CLI to plain JavaScript, one ESM bundle per
// entry point, run with `node --enable-source-maps <dir>/dist/<path>.js` (no tsx, no TypeScript at
// run time). dist/ mirrors src/: `<dir>/src/<path>.ts` compiles to `<dir>/dist/<path>.js`. It also
// bundles the web console (apps/console, vite) into apps/console/dist, which the gateway serves.
//
// Why esbuild bundles and not tsc: internal packages export their TypeScript source (tests and dev
// runs need no build step), so tsc would have to emit every package and rewrite each `exports` map to
// point at its output. Bundling inlines the @wakeloop/* packages into each entry point instead and
// leaves third-party packages external, so the production `node_modules` (npm ci --omit=dev) serves
// them as in development. Type checking stays `npm run typecheck`; this only emits.
import { existsSync } from "node:fs";
import { cp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { brotliCompressSync, gzipSync, constants as zlibConstants } from "node:zlib";
import { build } from "esbuild";
import { build as buildConsole } from "vite";

const root = join(import.meta.dirname, "..");

/** Each workspace with the entry points (under its src/) compiled from it. */
const WORKSPACES = [
  { dir: "apps/gateway", entries: ["main.ts", "cli/create-tenant.ts"] },
  { dir: "apps/orchestrator", entries: ["main.ts"] },
  { dir: "apps/harness-worker", entries: ["main.ts"] },
  { dir: "apps/sandbox-runner", entries: ["main.ts"] },
  { dir: "apps/memory-retrieval", entries: ["main.ts"] },
  { dir: "packages/db", entries: ["migrate-cli.ts"] },
  { dir: "packages/cli", entries: ["main.ts"] },
];

// Files read at run time relative to the module (`new URL("./agent/", import.meta.url)`): the bundle
// is dist/main.js, so they are copied to the same place relative to dist/ as they have to src/.
const RUNTIME_FILES = [{ from: "apps/sandbox-runner/src/agent", to: "apps/sandbox-runner/dist/agent" }];

/**
 * Internal packages are inlined. A third-party package stays external when the bundle, run from
 * `workspace`, finds the very copy the importing file finds in development; a copy only the importer
 * sees (an internal package's own version, nested in packages/<name>/node_modules) is inlined, since
 * the bundle cannot reach that folder at run time.
 */
function thirdPartyExternal(workspace) {
  return {
    name: "third-party-external",
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.path.startsWith("@wakeloop/") || args.pluginData === "resolving") return undefined;
        const resolve = (resolveDir) =>
          builder.resolve(args.path, { kind: args.kind, resolveDir, pluginData: "resolving" });
        const fromImporter = await resolve(args.resolveDir);
        if (fromImporter.external) return { path: args.path, external: true };
        const fromBundle = await resolve(join(root, workspace));
        return fromBundle.path === fromImporter.path ? { path: args.path, external: true } : undefined;
      });
    },
  };
}

/** Names of the third-party packages a workspace may import: its dependencies and its internal ones'. */
async function declaredDependencies(workspace, seen = new Set()) {
  const manifest = JSON.parse(await readFile(join(root, workspace, "package.json"), "utf8"));
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (seen.has(name)) continue;
    seen.add(name);
    if (name.startsWith("@wakeloop/")) await declaredDependencies(workspaceOf(name), seen);
  }
  return seen;
}

const workspaceOf = (name) => {
  const short = name.slice("@wakeloop/".length);
  return existsSync(join(root, "apps", short)) ? `apps/${short}` : `packages/${short}`;
};
const packageName = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const builtins = new Set(builtinModules);

/**
 * The production image installs only the dependencies a workspace declares (npm ci --omit=dev
 * --workspace): an external import from our source that none of them declares would work here (the
 * dev install hoists everything) and fail there, so it fails the build instead.
 */
async function checkDeclared(workspace, metafile) {
  const declared = await declaredDependencies(workspace);
  const missing = new Set();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (input.includes("node_modules/")) continue;
    for (const { path, external } of imports) {
      // `<runtime>` is esbuild's own helper module, inlined.
      if (!external || path === "<runtime>" || path.startsWith("node:") || builtins.has(path)) continue;
      if (!declared.has(packageName(path))) missing.add(`${packageName(path)} (imported by ${input})`);
    }
  }
  if (missing.size > 0) {
    throw new Error(
      `${workspace} does not declare, directly or through an internal package:\n  ${[...missing].join("\n  ")}`,
    );
  }
}

/**
 * Brotli and gzip copies of the console's scripts and styles, made once here so the gateway sends the
 * smaller file to a browser that accepts it (`preCompressed`) without compressing on each request.
 */
async function precompress(dir) {
  const files = (await readdir(dir)).filter((name) => /\.(js|css)$/.test(name));
  await Promise.all(
    files.map(async (name) => {
      const content = await readFile(join(dir, name));
      await writeFile(
        join(dir, `${name}.br`),
        brotliCompressSync(content, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }),
      );
      await writeFile(join(dir, `${name}.gz`), gzipSync(content, { level: 9 }));
    }),
  );
}

const started = performance.now();
await Promise.all(WORKSPACES.map(({ dir }) => rm(join(root, dir, "dist"), { recursive: true, force: true })));
await Promise.all(
  WORKSPACES.map(async ({ dir, entries }) => {
    const result = await build({
      absWorkingDir: root,
      entryPoints: entries.map((entry) => ({
        in: `${dir}/src/${entry}`,
        out: `${dir}/dist/${entry.replace(/\.ts$/, "")}`,
      })),
      outdir: root,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "linked",
      // Bundling renames clashing top-level names; keep `.name` of classes and functions as in
      // source (error classes and logs use it).
      keepNames: true,
      // Inlined CommonJS code (a nested copy, see above) requires its externals: an ESM bundle has no
      // `require` of its own, so it gets one that resolves from the bundle, as the plugin checked.
      banner: {
        js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
      },
      metafile: true,
      plugins: [thirdPartyExternal(dir)],
      logLevel: "warning",
    });
    await checkDeclared(dir, result.metafile);
  }),
);
for (const { from, to } of RUNTIME_FILES) {
  await cp(join(root, from), join(root, to), {
    recursive: true,
    filter: (source) => !source.endsWith(".test.ts"),
  });
}
// The browser app has its own bundler settings (apps/console/vite.config.ts) and no server entry point.
await buildConsole({ root: join(root, "apps/console"), logLevel: "warn" });
await precompress(join(root, "apps/console/dist/assets"));
const count = WORKSPACES.reduce((sum, { entries }) => sum + entries.length, 0);
console.log(
  `built ${count} entry points and the web console in ${Math.round(performance.now() - started)} ms`,
);
