// Counters of the container's resource limits (cgroup v2, or v1 on older hosts), read before and after
// a command so its result can say "killed by the memory limit" or "hit the process limit" instead of
// leaving the model to guess from a bare SIGKILL or "fork: Resource temporarily unavailable". The
// workspace's size limit is read the same way: is it full once the command ended?
import fs from "node:fs";
import type { AgentLimitDelta } from "@wakeloop/contracts";
import { WORKSPACE } from "./paths";

export type LimitSnapshot = { oomKills: number; pidsLimitHits: number };

/**
 * A write can fail with ENOSPC while statfs still shows a little room (ext4 holds space back for the
 * metadata of data not yet written out), so "full" is: under 1 MiB or 1% of the size left.
 */
function workspaceFull(): boolean {
  try {
    const space = fs.statfsSync(WORKSPACE);
    const slack = Math.max(1024 * 1024, (space.blocks * space.bsize) / 100);
    return space.bavail * space.bsize < slack;
  } catch {
    return false; // no statfs (Node < 18.15) or no workspace: say nothing rather than guess
  }
}

function counter(files: string[], key: string): number {
  for (const file of files) {
    try {
      const match = new RegExp(`^${key} (\\d+)$`, "m").exec(fs.readFileSync(file, "utf8"));
      if (match) return Number(match[1]);
    } catch {
      // not this cgroup version
    }
  }
  return 0;
}

export function snapshot(): LimitSnapshot {
  return {
    oomKills: counter(
      ["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"],
      "oom_kill",
    ),
    pidsLimitHits: counter(["/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/pids/pids.events"], "max"),
  };
}

/** What happened to the limits since `before`. */
export function delta(before: LimitSnapshot): NonNullable<AgentLimitDelta> {
  const now = snapshot();
  return {
    memoryLimitKills: now.oomKills - before.oomKills,
    pidsLimitHits: now.pidsLimitHits - before.pidsLimitHits,
    workspaceFull: workspaceFull(),
  };
}
