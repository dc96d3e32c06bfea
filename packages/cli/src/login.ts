import type { WakeloopClient } from "@wakeloop/sdk";
import { HttpUrl } from "./config";
import { CliError, ExitCode } from "./errors";
import type { Connection, StoredLogin } from "./login-store";
import { type Io, LineReader } from "./terminal";

/**
 * The login to keep, asked for what the flags do not give and checked against the gateway (one list
 * call) before anything is written: a wrong URL or key leaves the stored login as it was.
 */
export async function runLogin(
  flags: { url?: string; apiKey?: string },
  io: Io,
  connect: (connection: Connection) => WakeloopClient,
): Promise<StoredLogin> {
  // Only a missing value opens standard input: with both flags given, login never waits on it.
  let reader: LineReader | undefined;
  const value = async (given: string | undefined, what: string, flag: string, secret = false) => {
    if (given === undefined) reader ??= new LineReader(io, () => reader?.close());
    const answer = given ?? (await reader?.ask(`${what}: `, { secret }));
    if (answer === null || answer === undefined || answer.trim() === "") {
      throw new CliError(`login needs ${what} (${flag})`, ExitCode.usage);
    }
    return answer.trim();
  };
  let url: string;
  let apiKey: string;
  try {
    url = await value(flags.url, "gateway URL", "--url");
    apiKey = await value(flags.apiKey, "API key", "--api-key", true);
  } finally {
    reader?.close();
  }
  if (!HttpUrl.safeParse(url).success) {
    throw new CliError(`"${url}" is not an http(s) URL, e.g. http://127.0.0.1:8080`, ExitCode.usage);
  }
  await connect({ baseUrl: url, apiKey }).agents.list({ limit: 1 });
  return { url, api_key: apiKey };
}
