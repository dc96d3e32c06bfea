#!/usr/bin/env node
// `npx wakeloop` runs the CLI that `npm run build` compiled; in development run the source instead:
// `npx tsx packages/cli/src/main.ts`.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/main.js", import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write(
    "wakeloop: the CLI is not built: run `npm run build` first, or `npx tsx packages/cli/src/main.ts`\n",
  );
  process.exit(1);
}
await import(compiled.href);
