import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Platform } from "@wakeloop/testing";
import { round2 as round } from "@wakeloop/testing";
import { sql } from "kysely";

/*
 * CPU time and memory of the processes a scenario loads, read from /proc (Linux): utime + stime of
 * /proc/<pid>/stat, in clock ticks, and VmHWM (peak resident set) of /proc/<pid>/status. Sampled
 * before and after a scenario; a process that exits in between loses its share, one that starts in
 * between counts in full.
 */

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/** CPU milliseconds the process has used so far, or undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces), 1-based as in proc(5): utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Peak resident memory of the process in MB (VmHWM), or undefined once it is gone. */
export function peakRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? undefined : round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

function pgrep(name: string): number[] {
  try {
    return execFileSync("pgrep", ["-x", name]).toString().trim().split("\n").map(Number).filter(Boolean);
  } catch {
    return [];
  }
}

/** Labelled groups of pids: every app of the platform, its Postgres backends, nats-server, this process. */
export async function platformProcesses(platform: Platform): Promise<Map<string, number[]>> {
  const groups = new Map<string, number[]>();
  for (const [name, app] of platform.apps) if (app.pid !== undefined) groups.set(name, [app.pid]);
  // Only the backends serving the platform's database: the Postgres server is shared with other users.
  const backends = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(
    platform.db,
  );
  groups.set(
    "postgres (this database's backends)",
    backends.rows.map((row) => row.pid),
  );
  groups.set("nats-server (whole server, shared)", pgrep("nats-server"));
  groups.set("bench + fake model (this process)", [process.pid]);
  return groups;
}

export type CpuSample = Map<string, Map<number, number>>;

export async function sampleCpu(platform: Platform): Promise<CpuSample> {
  const sample: CpuSample = new Map();
  for (const [label, pids] of await platformProcesses(platform)) {
    const byPid = new Map<number, number>();
    for (const pid of pids) {
      const ms = cpuMs(pid);
      if (ms !== undefined) byPid.set(pid, ms);
    }
    sample.set(label, byPid);
  }
  return sample;
}

/** CPU milliseconds each group used between two samples; the end sample's pids decide who counts. */
export function cpuBetween(before: CpuSample, after: CpuSample): Record<string, number> {
  const used: Record<string, number> = {};
  for (const [label, pids] of after) {
    let total = 0;
    for (const [pid, ms] of pids) total += ms - (before.get(label)?.get(pid) ?? 0);
    used[label] = round(total);
  }
  return used;
}
