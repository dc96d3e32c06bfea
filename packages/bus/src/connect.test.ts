import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { connectBus } from "./connect";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

describe("connectBus", () => {
  it("fails start-up with a retryable bus_unreachable when no server answers", async () => {
    const port = await closedPort();
    await expect(
      connectBus({ servers: `nats://127.0.0.1:${port}`, name: "test", connectTimeoutMs: 1_000 }),
    ).rejects.toMatchObject({ name: "WakeloopError", code: "bus_unreachable", retryable: true });
  });
});
