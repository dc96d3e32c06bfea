import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { CliError, ExitCode, fieldPath } from "./errors";

// An empty variable counts as unset, as shells make it easy to export one by accident.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === "" ? undefined : value), schema.optional());

/** A gateway's base URL: http or https. */
export const HttpUrl = z.url({
  protocol: /^https?$/,
  error: "expected an http(s) URL, e.g. http://127.0.0.1:8080",
});

/** The environment the CLI reads, parsed once in main.ts; nothing else reads `process.env`. */
export const CliEnv = z.object({
  /** Base of the config directory (XDG); the login is kept in `$XDG_CONFIG_HOME/wakeloop`. */
  XDG_CONFIG_HOME: optional(z.string()),
  /** Where `~/.config` is when XDG_CONFIG_HOME is not set. */
  HOME: optional(z.string()),
  /** The gateway's base URL; overrides the stored login (CI, scripts). */
  WAKELOOP_URL: optional(HttpUrl),
  /** The API key; overrides the stored login. */
  WAKELOOP_API_KEY: optional(z.string()),
});
export type CliEnv = z.infer<typeof CliEnv>;

export function parseCliEnv(env: NodeJS.ProcessEnv): CliEnv {
  const parsed = CliEnv.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${fieldPath(issue.path)}: ${issue.message}`);
  throw new CliError(`invalid environment:\n${lines.join("\n")}`, ExitCode.usage);
}

/** `$XDG_CONFIG_HOME/wakeloop`, or `~/.config/wakeloop`. */
export function configDir(env: CliEnv): string {
  return join(env.XDG_CONFIG_HOME ?? join(env.HOME ?? homedir(), ".config"), "wakeloop");
}
