import {
  type ResourceToolName,
  type SandboxToolName,
  sandboxToolInputs,
  type ToolDefinition,
  type ToolEffect,
} from "@wakeloop/contracts";
import { z } from "zod";

type Traits = {
  description: string;
  group: "fs" | "runtime" | "browser";
  effects: ToolEffect[];
  /** Runs with no confirmation unless the agent or environment policy says otherwise. */
  ask?: boolean;
  idempotent: boolean;
  destructive?: boolean;
  /** Long calls are cancelled on interrupt; short atomic writes are waited for. */
  interrupt: "cancel" | "block";
  /** Mutating calls on the same key run one after another in the model's order. */
  resourceKey?: string;
};

/** The resources_* tools run in the sandbox too, but are defined with their own family in resources.ts. */
type HandToolName = Exclude<SandboxToolName, ResourceToolName>;

const traits: Record<HandToolName, Traits> = {
  read: {
    description:
      "Read a text file from the sandbox workspace. Returns numbered lines; page with offset/limit (lines). " +
      "The result says totalLineCount and selectedLineCount and how to continue when truncated.",
    group: "fs",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  write: {
    description: "Create or overwrite a file under /workspace with the given content (parents are created).",
    group: "fs",
    effects: ["write"],
    idempotent: true,
    destructive: true,
    interrupt: "block",
    resourceKey: "fs:{path}",
  },
  edit: {
    description:
      "Replace an exact string in a file. old_string must match exactly once unless replace_all is true.",
    group: "fs",
    effects: ["write"],
    idempotent: false,
    interrupt: "block",
    resourceKey: "fs:{path}",
  },
  apply_patch: {
    description:
      "Apply a unified diff to files under /workspace. All hunks must apply or nothing is written.",
    group: "fs",
    effects: ["write"],
    idempotent: false,
    destructive: true,
    interrupt: "block",
    resourceKey: "fs",
  },
  glob: {
    description: "Find files or directories matching a glob (e.g. src/**/*.ts) under a workspace path.",
    group: "fs",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  grep: {
    description: "Search file contents with ripgrep under a workspace path; returns path:line:text matches.",
    group: "fs",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  ls: {
    description: "List a workspace directory with entry types and sizes.",
    group: "fs",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  bash: {
    description:
      "Run one read-only inspection command WITHOUT a shell (no pipes, redirects, $(), $VAR or globs) and " +
      "with a fixed environment: ls, cat, head, " +
      "tail, wc, rg, grep, find, stat, pwd, echo, du, sort, uniq, diff, cut, basename, dirname, realpath. " +
      "Only their read-only options are accepted, long options spelled in full (--line-number, not --line). " +
      "Use shell_run to change things.",
    group: "runtime",
    effects: ["read", "execute"],
    idempotent: true,
    interrupt: "cancel",
  },
  shell_run: {
    description:
      "Run a shell command (bash -c) once in the sandbox, in the session's cwd and env. Output over 100000 " +
      "characters is truncated (page with shell_read_last_output). background/yield_ms return a process id " +
      "for the process tool.",
    group: "runtime",
    effects: ["write", "execute"],
    ask: true,
    idempotent: false,
    destructive: true,
    interrupt: "cancel",
    resourceKey: "shell",
  },
  shell_exec: {
    description:
      "Run a command in the persistent shell (cd and export persist across calls). If it runs past " +
      "timeout_ms it keeps running: use shell_wait.",
    group: "runtime",
    effects: ["write", "execute"],
    ask: true,
    idempotent: false,
    destructive: true,
    interrupt: "cancel",
    resourceKey: "shell:{shell_id}",
  },
  shell_open: {
    description: "Open (or reuse) a persistent shell before multi-step shell work.",
    group: "runtime",
    effects: ["execute"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  shell_wait: {
    description: "Wait for the persistent shell's running command; returns running or the finished result.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
    resourceKey: "shell:{shell_id}",
  },
  shell_close: {
    description: "Close a persistent shell (its running command is killed).",
    group: "runtime",
    effects: ["execute"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  shell_restart: {
    description:
      "Restart a persistent shell that is closed or stuck; the cwd and exported variables are kept.",
    group: "runtime",
    effects: ["execute"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  shell_describe: {
    description:
      "Describe a persistent shell: open/busy, current command, cwd, env overrides, recent commands.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  shell_history: {
    description: "Recent commands of a shell with exit codes, durations and short output previews.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  shell_read_last_output: {
    description:
      "Reread the latest command's output (or the live output of a running one) from a character offset.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  shell_read_command: {
    description:
      "Reread one earlier command by its command_id (from shell_history), from a character offset.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  shell_set_cwd: {
    description: "Set the working directory used by later bash, shell_run and shell_exec calls.",
    group: "runtime",
    effects: ["state"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  shell_set_env: {
    description:
      "Set an environment variable for later shell_run and shell_exec calls (grep and bash use a fixed " +
      "environment). Variables that choose code (PATH, LD_*, BASH_ENV, *_CONFIG*, GIT_*, ...) go through " +
      "the environment's exec policy like a command.",
    group: "runtime",
    effects: ["state"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  shell_unset_env: {
    description: "Remove an environment variable from later shell calls.",
    group: "runtime",
    effects: ["state"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "shell:{shell_id}",
  },
  process: {
    description:
      "Manage background processes started by shell_run: list, poll output (from an offset), write to " +
      "stdin, or send a signal (the whole process group).",
    group: "runtime",
    effects: ["read", "write", "execute"],
    idempotent: false,
    interrupt: "cancel",
  },
  sandbox_describe: {
    description:
      "Describe the sandbox: mounted roots and their access, limits, network, command policy and the " +
      "sandbox_execute actions with their arguments. Read it before sandbox_execute.",
    group: "runtime",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
  },
  sandbox_execute: {
    description:
      "Run one low-level sandbox action (list_dir, read_text, write_text, append_text, replace_text, mkdir, " +
      "stat, find_entries, grep_text, run_command, run_shell, *_persistent_shell) with its args.",
    group: "runtime",
    effects: ["read", "write", "execute"],
    ask: true,
    idempotent: false,
    destructive: true,
    interrupt: "cancel",
    resourceKey: "shell",
  },
  run_sandbox_code: {
    description:
      "Run a short JavaScript (node), Python (python3) or bash program in the session's sandbox and return " +
      "what it prints and its exit code. For quick exploration and data transformation; output over 100000 " +
      "characters is truncated.",
    group: "runtime",
    // Asks by default, unlike the personal-agent reference (whose code runs in an isolated VM): here the
    // program has the sandbox's full access, so it must not be a way around shell_run's ask.
    effects: ["write", "execute"],
    ask: true,
    idempotent: false,
    destructive: true,
    interrupt: "cancel",
    resourceKey: "shell",
  },
  // The personal-agent reference's Browser family: one Chromium per session, in the sandbox (its image
  // must be a browser image, hence `sandbox.browser`). Every call works on the one page, so all share
  // the `browser` key and run in the model's order. None asks by default, as in the reference: the page
  // runs in the sandbox, behind its network fence; an operator who wants a human before a click or a
  // script sets `always_ask` for them (or `group:browser`) in a policy.
  browser_navigate: {
    description:
      "Navigate the session's browser (headless Chromium in the sandbox, started on first use) to a URL. " +
      "Returns { url, title, status }. The page is reached from the sandbox's network, so its limits apply.",
    group: "browser",
    effects: ["network", "read"],
    idempotent: true,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_screenshot: {
    description:
      "Capture a screenshot of the current page (the viewport, the full page, or one element). Returns the " +
      "image (PNG, or JPEG when a PNG would be too large) and { width, height, media_type }.",
    group: "browser",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_click: {
    description: "Click an element of the current page. Returns { ok, url, title } after the click.",
    group: "browser",
    effects: ["network", "write"],
    idempotent: false,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_type: {
    description:
      "Type text into an input element of the current page (clear_first empties it first). Returns { ok }.",
    group: "browser",
    effects: ["write"],
    idempotent: false,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_extract_text: {
    description:
      "The visible text of the current page's body or of the first element matching a selector. Returns " +
      "{ text, truncated }.",
    group: "browser",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_extract_html: {
    description:
      "The HTML of the first element matching a selector (default body): its inner HTML, or with outer its " +
      "own tag too. Returns { html, truncated }.",
    group: "browser",
    effects: ["read"],
    idempotent: true,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_evaluate: {
    description:
      "Run JavaScript in the current page and return its JSON-serialized value: { result }. Interrupting " +
      "the session stops a script that does not end.",
    group: "browser",
    effects: ["network", "execute", "write"],
    idempotent: false,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  // OpenClaw's name: the same family as one tool with an action, hidden while the browser_* tools are
  // offered (TOOL_ALIASES), so a policy that allows only `browser` still browses.
  browser: {
    description:
      "Control the session's browser (headless Chromium in the sandbox): action navigate, screenshot, click, " +
      "type, extract_text, extract_html, evaluate or close, with that action's arguments beside it. Each " +
      "action does and returns what the browser_<action> tool does.",
    group: "browser",
    effects: ["network", "execute", "write"],
    idempotent: false,
    interrupt: "cancel",
    resourceKey: "browser",
  },
  browser_close: {
    description: "Close the session's browser and free its memory; the next browser call starts a fresh one.",
    group: "browser",
    effects: ["execute"],
    idempotent: true,
    interrupt: "block",
    resourceKey: "browser",
  },
};

function definition(name: HandToolName): ToolDefinition {
  const t = traits[name];
  const readOnly = !t.effects.some((effect) => effect === "write" || effect === "state");
  return {
    name,
    description: t.description,
    inputSchema: z.toJSONSchema(sandboxToolInputs[name], { io: "input" }) as Record<string, unknown>,
    ownership: "managed",
    permissionPolicy: t.ask ? "always_ask" : "always_allow",
    effects: t.effects,
    readOnly,
    destructive: t.destructive ?? false,
    idempotent: t.idempotent,
    interruptBehavior: t.interrupt,
    group: t.group,
    parallelism: { parallelSafe: readOnly, ...(t.resourceKey ? { resourceKey: t.resourceKey } : {}) },
    availability: t.group === "browser" ? ["sandbox.ready", "sandbox.browser"] : ["sandbox.ready"],
    ownerOnly: false,
    executor: "sandbox",
  };
}

/** The tools executed by the session's sandbox (executor "sandbox"), in a stable order. */
export const sandboxTools: ToolDefinition[] = (Object.keys(traits) as HandToolName[]).map(definition);
