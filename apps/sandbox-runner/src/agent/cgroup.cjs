// Counters of the container's resource limits (cgroup v2, or v1 on older hosts), read before and after
// a command so its result can say "killed by the memory limit" or "hit the process limit" instead of
// leaving the model to guess from a bare SIGKILL or "fork: Resource temporarily unavailable".
const fs = require("node:fs");

function counter(files, key) {
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

function snapshot() {
  return {
    oomKills: counter(
      ["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"],
      "oom_kill",
    ),
    pidsLimitHits: counter(["/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/pids/pids.events"], "max"),
  };
}

/** What happened to the limits since `before`. */
function delta(before) {
  const now = snapshot();
  return {
    memoryLimitKills: now.oomKills - before.oomKills,
    pidsLimitHits: now.pidsLimitHits - before.pidsLimitHits,
  };
}

module.exports = { snapshot, delta };
