import { Socket } from "node:net";
import { createTemplateDatabase, TEMPLATE_DATABASE_ENV } from "@wakeloop/testing";

// Integration tests talk to the real services; a missing one fails the run up front with the fix.
const required = [
  { name: "PostgreSQL", env: "WL_TEST_PG_URL", fallback: "postgres://postgres@127.0.0.1:5432/postgres" },
  { name: "NATS JetStream", env: "WL_TEST_NATS_URL", fallback: "nats://127.0.0.1:4222" },
];

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000);
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
    socket.connect(Number(port), hostname);
  });
}

/**
 * Checks the services, then migrates the run's template database once; every test database is a copy
 * of it (the forks inherit its name through the environment). The returned teardown drops it.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const missing: string[] = [];
  for (const service of required) {
    const url = process.env[service.env] ?? service.fallback;
    if (!(await reachable(url))) missing.push(`${service.name} at ${url}`);
  }
  if (missing.length > 0) {
    throw new Error(
      `Tests need real services, and these are not reachable: ${missing.join(", ")}.\n` +
        "Start them with: bash infra/ensure-services.sh",
    );
  }
  // The integration and serial tiers each run this setup; the first of the run makes the template.
  if (process.env[TEMPLATE_DATABASE_ENV] !== undefined) return async () => {};
  const template = await createTemplateDatabase();
  process.env[TEMPLATE_DATABASE_ENV] = template.name;
  return async () => {
    delete process.env[TEMPLATE_DATABASE_ENV];
    await template.drop();
  };
}
