// Killing a command means killing everything it started: its process group and any descendant that
// moved to another group or session (setsid, job control), found by walking /proc.
import fs from "node:fs";

type ProcessTable = { children: Map<number, number[]>; groups: Map<number, number> };

/** pid → children and pid → process group, for every process visible in the container. */
function processTable(): ProcessTable {
  const children = new Map<number, number[]>();
  const groups = new Map<number, number>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // The command name may contain spaces and parentheses: the fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    groups.set(Number(name), Number(fields[2]));
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  return { children, groups };
}

function descendants(pid: number, children = processTable().children): number[] {
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/**
 * Signals the process group led by `pid` and every descendant that left it. With `keepRoot` the
 * leader itself survives (a persistent shell whose running command is interrupted).
 */
export function killTree(pid: number, name: NodeJS.Signals = "SIGKILL", { keepRoot = false } = {}): void {
  const table = processTable();
  const tree = descendants(pid, table.children);
  if (!keepRoot) signal(-pid, name);
  for (const child of tree) {
    if (keepRoot || table.groups.get(child) !== pid) signal(child, name);
  }
}

/** Makes the command, not the agent, the out-of-memory killer's first choice inside the container. */
export function preferForOomKill(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/oom_score_adj`, "1000");
  } catch {
    // the process may already have exited
  }
}
