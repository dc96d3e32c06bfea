import { configDefaults, defineConfig } from "vitest/config";

/*
 * Three tiers (docs/testing.md):
 * - unit: pure and unit tests, no Postgres, NATS, Docker or app process (`npm test`). Its files are
 *   listed here; a test file not listed is an integration or serial test. The tier points the services'
 *   addresses at a closed port, so a unit test that starts needing one fails at once instead of
 *   slowing the tier.
 * - integration: the packages' and apps' other files, beside the unit tier in two forks (each file
 *   owns its database, a copy of the run's migrated template, and its subject prefix).
 * - serial: one file at a time, after the others (vitest runs a one-fork project last): the e2e
 *   files, which start whole platforms (two starting at once on the loaded 2-core machine missed
 *   their 60 s start-up timeout), the compiled build, which rewrites the dist/ folders that running
 *   gateways serve, and files that assert fairness, a timeout's margin or a 100 ms batch window.
 */
const UNIT = [
  ...[
    "cli",
    "contracts",
    "egress",
    "fake-model",
    "model-providers",
    "sandbox-client",
    "sdk",
    "service-kit",
    "session-core",
    "tool-runtime",
  ].map((name) => `packages/${name}/src/**/*.test.ts`),
  "apps/console/src/**/*.test.ts",
  "apps/gateway/src/agents/agent-diff.test.ts",
  "apps/gateway/src/auth/api-key-secret.test.ts",
  "apps/gateway/src/console/console-files.test.ts",
  "apps/gateway/src/events/check-user-events.test.ts",
  "apps/gateway/src/events/route-child-answers.test.ts",
  "apps/gateway/src/http/api-error.test.ts",
  "apps/gateway/src/http/provided-fields.test.ts",
  "apps/gateway/src/quotas/*.test.ts",
  "apps/harness-worker/src/config.test.ts",
  "apps/harness-worker/src/context/*.test.ts",
  "apps/harness-worker/src/pull-gate.test.ts",
  "apps/harness-worker/src/session/history-cache.test.ts",
  "apps/harness-worker/src/tools/agent-tool-allow.property.test.ts",
  "apps/harness-worker/src/tools/agent-tool-program.test.ts",
  "apps/harness-worker/src/tools/exec-approval.test.ts",
  "apps/harness-worker/src/tools/outcome-tools.test.ts",
  "apps/memory-retrieval/src/hit-ranking.test.ts",
  "apps/memory-retrieval/src/recall.test.ts",
  "apps/memory-retrieval/src/vector-cache.test.ts",
  "apps/orchestrator/src/config.test.ts",
  "apps/sandbox-runner/src/agent/*.test.ts",
  "apps/sandbox-runner/src/agent-channel.test.ts",
  "apps/sandbox-runner/src/agent-frames.test.ts",
  "apps/sandbox-runner/src/agent-program.test.ts",
  "apps/sandbox-runner/src/call-journal.test.ts",
  "apps/sandbox-runner/src/container-spec.test.ts",
  "apps/sandbox-runner/src/firewall-rules.test.ts",
  "apps/sandbox-runner/src/sandbox-registry.test.ts",
  "apps/sandbox-runner/src/sandbox-status.test.ts",
  "apps/sandbox-runner/src/tenant-quota.test.ts",
  "apps/sandbox-runner/src/tools/inspection-command.test.ts",
  "apps/sandbox-runner/src/tools/output-format.test.ts",
  "packages/bus/src/connect.test.ts",
  "packages/bus/src/lag-histogram.test.ts",
  "packages/bus/src/subjects.test.ts",
  "packages/db/src/ids.test.ts",
  "packages/db/src/sql-placeholders.test.ts",
  "packages/provider-credentials/src/credential-cipher.test.ts",
  "packages/telemetry/src/bounded-attributes.test.ts",
  "packages/telemetry/src/secret-scrubber.test.ts",
  "packages/telemetry/src/session-attribution.test.ts",
  "test/infra/*.test.ts",
];

const SERIAL = [
  // The files that start the apps as processes: whole platforms, gateways, the tenant CLI, the build.
  "test/**/*.test.ts",
  "packages/testing/src/platform.test.ts",
  "apps/orchestrator/src/sandbox-release.test.ts",
  "packages/bus/src/consume.test.ts",
  // Restart a NATS container: beside other files on a loaded machine, the restarts alone took their time.
  "packages/testing/src/nats.test.ts",
  "packages/bus/src/consume-restart.test.ts",
  "packages/bus/src/outbox-relay.test.ts",
];

// Nowhere: connecting to port 1 is refused at once.
const NO_SERVICES = {
  WL_TEST_PG_URL: "postgres://postgres@127.0.0.1:1/postgres",
  WL_TEST_NATS_URL: "nats://127.0.0.1:1",
  DOCKER_HOST: "tcp://127.0.0.1:1",
};

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "unit", include: UNIT, env: NO_SERVICES, isolate: false } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...UNIT, ...SERIAL],
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: SERIAL,
          exclude: [...configDefaults.exclude, ...UNIT],
          globalSetup: ["test/global-setup.ts"],
          maxWorkers: 1,
        },
      },
    ],
  },
});
