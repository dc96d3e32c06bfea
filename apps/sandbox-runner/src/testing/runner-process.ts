import Docker from "dockerode";
import type { RunnerLog } from "../runner-log";
import { SandboxManager } from "../sandbox-manager";
import { testEnvironment, testRunnerSettings } from "./docker-fixture";

// A runner in its own process, for the test that kills it with SIGKILL: it ensures the sessions
// named on the command line (the first cold, the rest from a warm pool of one), prints READY, and
// then runs until it is killed.

const [runnerId, stateDir, ...sessionIds] = process.argv.slice(2);
if (!runnerId || !stateDir) throw new Error("usage: runner-process <runnerId> <stateDir> <sessionId>...");
const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as RunnerLog;
const manager = new SandboxManager({
  docker: new Docker(),
  runnerId,
  stateDir,
  idleStopMs: 600_000,
  log: silent,
  ...testRunnerSettings(),
});
await manager.start();
const environment = testEnvironment({ warm_pool_size: 1 });
const provisioned: string[] = [];
for (const sessionId of sessionIds) {
  const ensured = await manager.ensure({ tenant_id: "tnt_test", session_id: sessionId, environment });
  provisioned.push(ensured.provisioning);
  await manager.execute({
    tenant_id: "tnt_test",
    session_id: sessionId,
    tool_call_id: `tcall_${sessionId}_setup`,
    tool: "shell_exec",
    input: {
      command: `mkdir -p /workspace/w && cd /workspace/w && export OWNER=${sessionId} && echo ${sessionId} > id.txt`,
    },
    approved: true,
  });
  await manager.pool.waitFull();
}
process.stdout.write(`READY ${JSON.stringify(provisioned)}\n`);
setInterval(() => {}, 60_000);
