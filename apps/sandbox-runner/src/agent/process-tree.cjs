// Killing a command means killing everything it started: its process group and any descendant that
// moved to another group or session (setsid, job control), found by walking /proc.
const fs = require("node:fs");

/** pid → { children, pgrp } for every process visible in the container. */
function processTable() {
  const children = new Map();
  const groups = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
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

function descendants(pid, children = processTable().children) {
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift();
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pid, name) {
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
function killTree(pid, name = "SIGKILL", { keepRoot = false } = {}) {
  const table = processTable();
  const tree = descendants(pid, table.children);
  if (!keepRoot) signal(-pid, name);
  for (const child of tree) {
    if (keepRoot || table.groups.get(child) !== pid) signal(child, name);
  }
}

/** Makes the command, not the agent, the out-of-memory killer's first choice inside the container. */
function preferForOomKill(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/oom_score_adj`, "1000");
  } catch {
    // the process may already have exited
  }
}

module.exports = { killTree, descendants, preferForOomKill };
