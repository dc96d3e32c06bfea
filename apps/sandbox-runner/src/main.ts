import { announceSubstrateChange } from "@wakeloop/sandbox-client";
import { runService, sandboxLimits, substrateLimits } from "@wakeloop/service-kit";
import Docker from "dockerode";
import { postgresApprovals } from "./committed-allow";
import { loadConfig } from "./config";
import { observeSandboxes } from "./sandbox-metrics";
import { startSandboxService } from "./sandbox-service";
import { SubstrateMirror } from "./substrate-mirror";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "sandbox-runner",
  config: loadConfig(),
  start: async ({ config, bus, db, log, meter }) => {
    const runner = await startSandboxService({
      bus,
      docker: new Docker({ socketPath: config.DOCKER_SOCKET }),
      runnerId: config.SANDBOX_RUNNER_ID,
      stateDir: config.SANDBOX_STATE_DIR,
      idleStopMs: config.SANDBOX_IDLE_STOP_MS,
      limits: sandboxLimits(config),
      maxSandboxesPerTenant: config.SANDBOX_MAX_PER_TENANT,
      nofile: config.SANDBOX_NOFILE,
      poolIdleMs: config.SANDBOX_POOL_IDLE_MS,
      maxPools: config.SANDBOX_MAX_POOLS,
      dnsServers: config.SANDBOX_DNS_SERVERS,
      approvals: postgresApprovals(db),
      substrates: new SubstrateMirror(db, substrateLimits(config), config.SANDBOX_STATE_DIR, log, (scope) =>
        announceSubstrateChange(bus, scope),
      ),
      log,
    });
    observeSandboxes(meter, runner.manager);
    return { stop: () => runner.stop() };
  },
});
