import { runCli } from "./run";
import { processIo } from "./terminal";

// `wakeloop … | head` closes stdout early: that ends the command quietly, as for any Unix tool.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});
process.exitCode = await runCli(process.argv.slice(2), process.env, processIo());
