import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import { builtinScripts, isBuiltinScriptName } from "./builtin-scripts";
import { type Script, ScriptFile } from "./script";
import { startFakeModelServer } from "./server";

const USAGE = `usage: tsx packages/fake-model/src/cli.ts [--port 4010] [--host 127.0.0.1]
       [--script demo|echo|<file.json>] [--approval-tool deploy] [--chunk-delay-ms 30]`;

async function loadScript(name: string, approvalTool: string, chunkDelayMs: number): Promise<Script> {
  if (isBuiltinScriptName(name)) return builtinScripts[name]({ approvalTool, chunkDelayMs });
  const parsed = ScriptFile.safeParse(JSON.parse(await readFile(name, "utf8")));
  if (!parsed.success) throw new Error(`${name} is not a valid script:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "4010" },
      host: { type: "string", default: "127.0.0.1" },
      script: { type: "string", default: "demo" },
      "approval-tool": { type: "string", default: "deploy" },
      "chunk-delay-ms": { type: "string", default: "30" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const script = await loadScript(values.script, values["approval-tool"], Number(values["chunk-delay-ms"]));
  const server = await startFakeModelServer({ port: Number(values.port), host: values.host, script });
  console.log(`fake model listening on ${server.url} (script: ${values.script})`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  console.error(USAGE);
  process.exit(1);
});
