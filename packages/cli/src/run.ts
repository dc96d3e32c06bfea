import { CommanderError } from "commander";
import { parseCliEnv } from "./config";
import { ExitCode, reportError } from "./errors";
import { buildProgram, type CliContext } from "./program";
import { type Io, writeLine } from "./terminal";

/** Runs one `wakeloop` command line and returns its exit code; every error is one clear message. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let context: CliContext | undefined;
  try {
    context = { env: parseCliEnv(env), io };
    await buildProgram(context).parseAsync(args, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has printed its own message (or the help / version asked for).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : ExitCode.usage;
    const report = reportError(error, context?.connection?.baseUrl);
    writeLine(io.stderr, `wakeloop: ${report.message}`);
    return report.exitCode;
  }
}
