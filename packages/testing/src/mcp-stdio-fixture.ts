import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { build } from "esbuild";

// The stdio MCP server of the tests (mcp-stdio/server.ts, written with the SDK) as one JavaScript file,
// and the steps that put it into a session's sandbox. The sandbox image has Debian's node (18), which
// runs the bundle; nothing of it runs on the host.

/**
 * Where tests install the server, and the spec's `args` that run it: the MCP server user's own home
 * (uid 1001, mode 0700), a place the sandbox user cannot write, as an operator's image would hold it;
 * the runner gives vault secrets to no server whose code the agent could change.
 */
export const STDIO_MCP_SERVER_PATH = "/home/wl-mcp/stdio-fixture.cjs";

let bundle: Promise<string> | undefined;

/** The server bundled for Node 18 (CommonJS, everything inlined but `node:` modules). */
export function stdioMcpServerBundle(): Promise<string> {
  bundle ??= build({
    entryPoints: [fileURLToPath(new URL("./mcp-stdio/server.ts", import.meta.url))],
    bundle: true,
    platform: "node",
    target: "node18",
    format: "cjs",
    write: false,
    minify: true,
    logLevel: "silent",
  }).then((result) => {
    const file = result.outputFiles[0];
    if (file === undefined) throw new Error("esbuild produced no bundle of the stdio MCP server");
    return file.text;
  });
  return bundle;
}

/**
 * Writes the bundle to `path` (default STDIO_MCP_SERVER_PATH) of the running container through a
 * `docker exec` whose stdin is the file, as the user who owns that place: the MCP server user for its
 * home, the sandbox user for a path in the workspace (a server the agent could rewrite).
 */
export async function installStdioMcpServer(
  docker: Docker,
  containerId: string,
  path: string = STDIO_MCP_SERVER_PATH,
): Promise<void> {
  const text = await stdioMcpServerBundle();
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path],
    User: path.startsWith("/home/wl-mcp/") ? "1001:1001" : "1000:1000",
    WorkingDir: "/workspace",
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: true });
  const done = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
    stream.resume();
  });
  stream.end(text);
  await done;
  const info = await exec.inspect();
  if (info.ExitCode !== 0) throw new Error(`could not install the stdio MCP server (exit ${info.ExitCode})`);
}

/** Kills the container's stdio MCP server processes, as a crash would; fails when none was running. */
export async function killStdioMcpServers(docker: Docker, containerId: string): Promise<void> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ["pkill", "-KILL", "-f", STDIO_MCP_SERVER_PATH],
    // The servers run as their own uid (1001): only that uid may signal them.
    User: "1001:1001",
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
    stream.resume();
  });
  const info = await exec.inspect();
  if (info.ExitCode !== 0)
    throw new Error(`no stdio MCP server process to kill (pkill exit ${info.ExitCode})`);
}
