import { SessionStatus } from "@wakeloop/contracts";
import { createClient, type WakeloopClient } from "@wakeloop/sdk";
import { Command, InvalidArgumentError, Option } from "commander";
import { readAgentFile } from "./agent-file";
import { runChat } from "./chat";
import type { CliEnv } from "./config";
import { agentTable, sessionTable } from "./format";
import { runLogin } from "./login";
import { type Connection, loginFile, readLogin, resolveConnection, writeLogin } from "./login-store";
import { runTail } from "./tail";
import { type Io, writeLine } from "./terminal";

export const VERSION = "0.1.0";

/** What the commands share: the environment, the streams, and the gateway once a command connects. */
export interface CliContext {
  env: CliEnv;
  io: Io;
  /** Set when a command has connected, so an error can name the gateway it tried. */
  connection?: Connection;
}

function integer(min: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < min) {
      throw new InvalidArgumentError(`expected an integer of at least ${min}`);
    }
    return number;
  };
}

const jsonOption = () => new Option("--json", "print JSON for scripts instead of text");

export function buildProgram(context: CliContext): Command {
  const { env, io } = context;
  const out = (text: string) => writeLine(io.stdout, text);
  const print = (json: boolean, value: unknown, text: () => string) =>
    out(json ? JSON.stringify(value, null, 2) : text());
  const connect = async (): Promise<WakeloopClient> => {
    const connection = resolveConnection(env, await readLogin(loginFile(env)));
    context.connection = connection;
    return createClient(connection);
  };

  const program = new Command("wakeloop")
    .description("Talk to a Wakeloop gateway: agents, sessions, live chats.")
    .version(VERSION)
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride();

  program
    .command("login")
    .description(
      "Check a gateway URL and API key and keep them in $XDG_CONFIG_HOME/wakeloop/config.json (mode 0600); " +
        "WAKELOOP_URL and WAKELOOP_API_KEY override it",
    )
    .option("--url <url>", "the gateway's base URL, e.g. http://127.0.0.1:8080 (asked when not given)")
    .option(
      "--api-key <key>",
      "the API key (asked when not given; prefer the prompt: flags land in shell history)",
    )
    .action(async (flags: { url?: string; apiKey?: string }) => {
      const file = loginFile(env);
      const login = await runLogin(flags, io, (connection) => {
        context.connection = connection;
        return createClient(connection);
      });
      await writeLogin(file, login);
      writeLine(io.stderr, `logged in to ${login.url}; saved in ${file}`);
    });

  const agents = program.command("agents").description("Create and list agents");
  agents
    .command("create")
    .description("Create an agent from a YAML (or JSON) file; it is checked before anything is sent")
    .requiredOption("-f, --file <path>", "the agent file (- reads standard input)")
    .addOption(jsonOption())
    .action(async (flags: { file: string; json?: boolean }) => {
      const spec = await readAgentFile(flags.file, io.stdin);
      const agent = await (await connect()).agents.create(spec);
      print(
        flags.json === true,
        agent,
        () => `created agent ${agent.id} (${agent.name}, version ${agent.version})`,
      );
    });
  agents
    .command("list")
    .description("List agents (latest versions), newest first")
    .option("--limit <n>", "at most this many (1-200)", integer(1), 50)
    .option("--after <id>", "continue after this agent id (the next page)")
    .option("--include-archived", "include archived agents")
    .addOption(jsonOption())
    .action(async (flags: { limit: number; after?: string; includeArchived?: boolean; json?: boolean }) => {
      const page = await (await connect()).agents.list({
        limit: flags.limit,
        after_id: flags.after,
        include_archived: flags.includeArchived,
      });
      print(flags.json === true, page, () => agentTable(page.data) + nextPage(page.next_after_id));
    });

  const sessions = program.command("sessions").description("List sessions and follow their events");
  sessions
    .command("list")
    .description("List sessions, newest first")
    .addOption(new Option("--status <status>", "only sessions in this status").choices(SessionStatus.options))
    .option("--agent <id>", "only sessions of this agent")
    .option("--parent <id>", "only sub-sessions of this session")
    .option("--limit <n>", "at most this many (1-200)", integer(1), 50)
    .option("--after <id>", "continue after this session id (the next page)")
    .addOption(jsonOption())
    .action(
      async (flags: {
        status?: SessionStatus;
        agent?: string;
        parent?: string;
        limit: number;
        after?: string;
        json?: boolean;
      }) => {
        const page = await (await connect()).sessions.list({
          status: flags.status,
          agent_id: flags.agent,
          parent_session_id: flags.parent,
          limit: flags.limit,
          after_id: flags.after,
        });
        print(flags.json === true, page, () => sessionTable(page.data) + nextPage(page.next_after_id));
      },
    );
  sessions
    .command("tail")
    .description("Print a session's events as they happen; a dropped connection resumes where it stopped")
    .argument("<session-id>", "the session")
    .option("--after <seq>", "start after this event seq (0: from the start)", integer(0), 0)
    .option("--until-idle", "stop once the session is idle after its latest event")
    .addOption(new Option("--json", "print one event per line as JSON"))
    .action(async (sessionId: string, flags: { after: number; untilIdle?: boolean; json?: boolean }) => {
      await runTail(
        await connect(),
        sessionId,
        { after: flags.after, untilIdle: flags.untilIdle === true, json: flags.json === true },
        io,
      );
    });

  program
    .command("chat")
    .description(
      "Chat with an agent in a new session (or continue one): answers stream in, tool calls show, and " +
        "approvals and custom tool results are asked inline",
    )
    .argument("[agent]", "the agent's id or name")
    .option("--session <id>", "continue this session instead of starting one")
    .option("--title <title>", "the new session's title")
    .option(
      "-m, --message <text>",
      "send this message instead of prompting (repeat for more turns), then exit",
      (text: string, earlier: string[]) => [...earlier, text],
      [] as string[],
    )
    .addOption(new Option("--json", "print every event as one JSON line (questions go to stderr)"))
    .action(
      async (
        agent: string | undefined,
        flags: { session?: string; title?: string; message: string[]; json?: boolean },
      ) => {
        await runChat(
          await connect(),
          {
            ...(agent !== undefined && { agent }),
            ...(flags.session !== undefined && { session: flags.session }),
            ...(flags.title !== undefined && { title: flags.title }),
            messages: flags.message,
            json: flags.json === true,
          },
          io,
        );
      },
    );

  return program;
}

function nextPage(after: string | null): string {
  return after === null ? "" : `\n(more: --after ${after})`;
}
