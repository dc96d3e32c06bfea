import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TmuxTerminalOptions {
  /** The program and its arguments, run directly (no shell). */
  command: readonly string[];
  /** Variables set for the program on top of this process's environment. */
  env?: Record<string, string>;
  cwd?: string;
  width?: number;
  height?: number;
}

/**
 * A real terminal for a test to drive an interactive program, as a person would: keys go in, the
 * screen comes out. Each terminal is its own tmux server (a private socket), so `close` removes exactly
 * what it started. The pane stays after the program exits, so its last screen remains.
 */
export class TmuxTerminal {
  private constructor(
    private readonly socket: string,
    /** Holds the file the program's exit status is written to. */
    private readonly dir: string,
  ) {}

  static async start(options: TmuxTerminalOptions): Promise<TmuxTerminal> {
    await requireTmux();
    const dir = await mkdtemp(join(tmpdir(), "wl-tmux-"));
    const terminal = new TmuxTerminal(`wl-test-${randomBytes(6).toString("hex")}`, dir);
    const variables = { ...options.env, WL_EXIT_FILE: terminal.exitFile };
    const env = Object.entries(variables).flatMap(([name, value]) => ["-e", `${name}=${value}`]);
    // One tmux invocation: the option is set before the program starts, so even a program that exits
    // at once leaves its pane behind.
    await terminal.tmux(
      "start-server",
      ";",
      "set-option",
      "-g",
      "remain-on-exit",
      "on",
      ";",
      "new-session",
      "-d",
      "-s",
      "main",
      "-x",
      String(options.width ?? 160),
      "-y",
      String(options.height ?? 50),
      ...(options.cwd ? ["-c", options.cwd] : []),
      ...env,
      "--",
      // tmux 3.3 does not always record a dead pane's exit status, so a shell records it. It traps
      // SIGINT (the program still gets Ctrl-C: a trapped signal is reset in children) to write 130.
      "sh",
      "-c",
      'trap true INT; "$@"; echo $? > "$WL_EXIT_FILE"',
      "sh",
      ...options.command,
    );
    return terminal;
  }

  private get exitFile(): string {
    return join(this.dir, "exit-status");
  }

  private async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run("tmux", ["-L", this.socket, "-f", "/dev/null", ...args]);
    return stdout;
  }

  /** Types `text` literally (no key names interpreted). */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", "main", "-l", text);
  }

  /** Presses keys by their tmux names: `Enter`, `C-c`, `C-d`. */
  async press(...keys: string[]): Promise<void> {
    await this.tmux("send-keys", "-t", "main", ...keys);
  }

  /** Types a line and presses Enter. */
  async sendLine(text: string): Promise<void> {
    await this.type(text);
    await this.press("Enter");
  }

  /** Everything the program has shown, scrollback included, wrapped lines joined. */
  async screen(): Promise<string> {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main");
  }

  /**
   * Waits until the screen matches `pattern` (a string is a substring; a RegExp may be global to count
   * matches with `times`) and returns the screen. Fails with the screen so far.
   */
  async waitFor(
    pattern: string | RegExp,
    options: { timeoutMs?: number; times?: number } = {},
  ): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    const times = options.times ?? 1;
    for (;;) {
      const screen = await this.screen();
      const count =
        typeof pattern === "string"
          ? screen.split(pattern).length - 1
          : (screen.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)) ?? []).length;
      if (count >= times) return screen;
      if (Date.now() > deadline) {
        throw new Error(`the terminal never showed ${String(pattern)} ×${times}; screen:\n${screen}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The program's exit status (128 + n when signal n ended it), once it has exited. */
  async exitCode(timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await readFile(this.exitFile, "utf8").catch(() => "");
      if (status.endsWith("\n")) return Number(status.trim());
      if (Date.now() > deadline) {
        throw new Error(`the program did not exit within ${timeoutMs} ms; screen:\n${await this.screen()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ends the program (if still running) and this terminal's tmux server. */
  async close(): Promise<void> {
    await this.tmux("kill-server").catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function requireTmux(): Promise<void> {
  try {
    await run("tmux", ["-V"]);
  } catch (error) {
    throw new Error(
      "tmux is needed to drive interactive programs in tests: install it (apt-get install tmux)",
      {
        cause: error,
      },
    );
  }
}
