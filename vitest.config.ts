import { configDefaults, defineConfig } from "vitest/config";

/*
 * Three tiers (README "Developing"):
 * - unit: pure and unit tests, no Postgres, NATS, Docker or platform (`npm test`). Its files are listed
 *   here; a test file not listed is an integration test. The tier points the services' addresses at a
 *   closed port, so a unit test that starts needing one fails at once instead of slowing the tier.
 * - integration: every other file, side by side (each owns its database, a copy of the run's
 *   migrated template, and its subject prefix).
 * - serial: files that must run alone, after the others: the compiled build rewrites the apps' and
 *   the console's dist/ that running gateways serve; the others assert fairness, a timeout's margin or
 *   a batch window (100 ms) that the load of side-by-side files blurs.
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

// The files that start the apps as processes: whole platforms, gateways, the tenant CLI.
const E2E = ["test/**/*.test.ts", "packages/testing/src/platform.test.ts"];

const SERIAL = [
  "test/compiled-build.test.ts",
  "test/security/wake-fairness.security.test.ts",
  "apps/orchestrator/src/sandbox-release.test.ts",
  "packages/bus/src/consume.test.ts",
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
    // Two forks on the 2-core machine, and at most one of them boots whole platforms (the e2e tier):
    // two platforms (six processes each) starting at once missed their 60 s start-up timeout on the
    // loaded machine (docs/testing.md).
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "unit", include: UNIT, env: NO_SERVICES, isolate: false } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...UNIT, ...E2E, ...SERIAL],
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: E2E,
          exclude: [...configDefaults.exclude, ...UNIT, ...SERIAL],
          globalSetup: ["test/global-setup.ts"],
          maxWorkers: 1,
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: SERIAL,
          globalSetup: ["test/global-setup.ts"],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
