import { readFile } from "node:fs/promises";
import { CreateAgentRequest } from "@wakeloop/contracts";
import { parseDocument } from "yaml";
import { CliError, ExitCode, fieldPath } from "./errors";

/**
 * An agent spec from YAML (or JSON, which is YAML) text, validated against the API's own schema before
 * anything is sent: every problem is reported with its field path, e.g. `model.provider: …`. `source`
 * names the file in messages.
 */
export function parseAgentSpec(text: string, source: string): CreateAgentRequest {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    const lines = document.errors.map((error) => `  ${error.message.split("\n")[0]}`);
    throw new CliError(`${source} is not valid YAML:\n${lines.join("\n")}`, ExitCode.usage);
  }
  const value: unknown = document.toJS();
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(`${source} must be a YAML mapping of agent fields (name, model, …)`, ExitCode.usage);
  }
  const parsed = CreateAgentRequest.safeParse(value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${fieldPath(issue.path)}: ${issue.message}`);
    throw new CliError(`${source} is not a valid agent:\n${lines.join("\n")}`, ExitCode.usage);
  }
  // The API applies the defaults itself; send what the file says, checked.
  return value as CreateAgentRequest;
}

/** Reads and validates an agent file; `-` reads standard input. */
export async function readAgentFile(path: string, stdin: NodeJS.ReadableStream): Promise<CreateAgentRequest> {
  let text: string;
  try {
    text = path === "-" ? await readAll(stdin) : await readFile(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, ExitCode.usage, { cause: error });
  }
  return parseAgentSpec(text, path === "-" ? "standard input" : path);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}
