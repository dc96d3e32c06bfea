import { networkInterfaces } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process";

// Issue #30 point 6: nothing listens where it should not. The health and metrics ports answer without
// authentication, so by default they bind loopback only, like the API; HEALTH_HOST and METRICS_HOST
// open them where probes or a scraper come from outside (docker-compose.yml opens metrics).

/** An address of this machine that is not loopback, which a neighbour on its network could reach. */
function outsideAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((info) => info !== undefined && info.family === "IPv4" && !info.internal);
  if (found === undefined) throw new Error("this machine has no non-loopback IPv4 address to test from");
  return found.address;
}

/** The status of GET `path`, or the connection error's code when nothing answered. */
async function reach(host: string, port: number, path: string): Promise<number | string> {
  try {
    const response = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? String(error);
  }
}

const started: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((gateway) => gateway.stop()));
});

async function portsOf(env: Record<string, string>) {
  const gateway = await startGatewayProcess({ env });
  started.push(gateway);
  const ready = await gateway.process.record("ready", 30_000);
  return { api: gateway.port, health: Number(ready.port), metrics: Number(ready.metrics_port) };
}

describe("the health and metrics ports", () => {
  it("answer on loopback only by default, like the API", async () => {
    const { api, health, metrics } = await portsOf({});
    const outside = outsideAddress();
    expect(await reach("127.0.0.1", health, "/healthz")).toBe(200);
    expect(await reach("127.0.0.1", metrics, "/metrics")).toBe(200);
    for (const [port, path] of [
      [health, "/healthz"],
      [metrics, "/metrics"],
      [api, "/v1/openapi.json"],
    ] as const)
      expect(await reach(outside, port, path), `${path} on ${outside}`).toBe("ECONNREFUSED");
  }, 120_000);

  it("answer from outside when HEALTH_HOST and METRICS_HOST open them", async () => {
    const { health, metrics } = await portsOf({ HEALTH_HOST: "0.0.0.0", METRICS_HOST: "0.0.0.0" });
    const outside = outsideAddress();
    expect(await reach(outside, health, "/healthz")).toBe(200);
    expect(await reach(outside, metrics, "/metrics")).toBe(200);
  }, 120_000);
});
