import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type CliEnv, configDir, HttpUrl } from "./config";
import { CliError, ExitCode, fieldPath } from "./errors";

/** What `wakeloop login` keeps: the file holds a secret, so it is readable by its owner only (0600). */
export const StoredLogin = z.strictObject({ url: HttpUrl, api_key: z.string().min(1) });
export type StoredLogin = z.infer<typeof StoredLogin>;

export function loginFile(env: CliEnv): string {
  return join(configDir(env), "config.json");
}

/** The stored login, or null when there is none; a damaged file is an error that names it. */
export async function readLogin(file: string): Promise<StoredLogin | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, ExitCode.usage, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not JSON: run \`wakeloop login\` to write it again`, ExitCode.usage);
  }
  const parsed = StoredLogin.safeParse(json);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${fieldPath(issue.path)}: ${issue.message}`);
  throw new CliError(
    `${file} is not a valid login (run \`wakeloop login\` to write it again):\n${lines.join("\n")}`,
    ExitCode.usage,
  );
}

/**
 * Writes the login whole or not at all: a temporary file created 0600 is renamed over the old one, so
 * a crash never leaves a half-written file and the key is never readable by others, even briefly.
 */
export async function writeLogin(file: string, login: StoredLogin): Promise<void> {
  const dir = join(file, "..");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFile is masked by the umask and ignored for an existing file.
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

/** The gateway to talk to: WAKELOOP_URL / WAKELOOP_API_KEY over the stored login, field by field. */
export function resolveConnection(env: CliEnv, stored: StoredLogin | null): Connection {
  const baseUrl = env.WAKELOOP_URL ?? stored?.url;
  const apiKey = env.WAKELOOP_API_KEY ?? stored?.api_key;
  if (baseUrl === undefined || apiKey === undefined) {
    throw new CliError(
      "not logged in: run `wakeloop login`, or set WAKELOOP_URL and WAKELOOP_API_KEY",
      ExitCode.usage,
    );
  }
  return { baseUrl, apiKey };
}
