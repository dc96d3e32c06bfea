import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { labelledContainers } from "./docker";
import { cleanupPrefix, NATS_CONTAINER_LABEL, startNatsServer, testNatsUrl, testPrefix } from "./nats";

describe("testPrefix", () => {
  it("gives a fresh lowercase prefix each call", () => {
    const a = testPrefix();
    expect(a).toMatch(/^t[0-9a-f]{10}$/);
    expect(testPrefix()).not.toBe(a);
  });
});

describe("cleanupPrefix", () => {
  it("deletes the streams of one prefix and leaves the others", async () => {
    const nc = await connect({ servers: testNatsUrl() });
    const jsm = await jetstreamManager(nc);
    const mine = testPrefix();
    const other = `${mine}x`; // shares the first characters: must survive
    try {
      await jsm.streams.add({ name: `${mine.toUpperCase()}_EVENTS`, subjects: [`${mine}.evt.>`] });
      await jsm.streams.add({ name: `${other.toUpperCase()}_EVENTS`, subjects: [`${other}.evt.>`] });
      await cleanupPrefix(jsm, mine);
      const names: string[] = [];
      for await (const name of jsm.streams.names()) names.push(name);
      expect(names).not.toContain(`${mine.toUpperCase()}_EVENTS`);
      expect(names).toContain(`${other.toUpperCase()}_EVENTS`);
    } finally {
      await cleanupPrefix(jsm, other);
      await nc.close();
    }
  });
});

describe("startNatsServer", () => {
  it("runs a private JetStream server that keeps its store and port across restarts and crashes", async () => {
    const server = await startNatsServer();
    try {
      expect(server.url).not.toBe(testNatsUrl());
      const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: "KEPT", subjects: ["kept.>"] });
      let published = 0;
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        await jsm.jetstream().publish("kept.a", signal);
        published++;
        const reconnected = (async () => {
          for await (const status of nc.status()) if (status.type === "reconnect") return;
        })();
        await server.restart({ downMs: 200, signal });
        // Requests sent while the client is still reconnecting are lost; wait for it like a service would.
        await reconnected;
        const info = await jsm.streams.info("KEPT");
        expect(info.state.messages).toBe(published);
      }
      await nc.close();
    } finally {
      await server.stop();
    }
    await expect(connect({ servers: server.url, timeout: 500 })).rejects.toThrow();
  }, 90_000);

  it("leaves no container behind once stopped", async () => {
    const docker = new Docker();
    const server = await startNatsServer();
    const labels = { [NATS_CONTAINER_LABEL]: String(server.port) };
    expect(await labelledContainers(docker, labels)).toHaveLength(1);
    await server.stop();
    expect(await labelledContainers(docker, labels)).toHaveLength(0);
  });
});
