import { Duplex } from "node:stream";
import type { SandboxStatusNotice, SandboxStatusValue } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { AgentChannel } from "./agent-channel";
import { SandboxContainer } from "./sandbox-container";
import { SandboxRegistry } from "./sandbox-registry";
import { SandboxStatus } from "./sandbox-status";
import { silent, testEnvironment } from "./testing/docker-fixture";

// The channel runs over a stream the test ends, as a container whose agent died would end it.

/** Ends the stream and waits until the channel has seen it close. */
async function end(stream: Duplex): Promise<void> {
  const closed = new Promise((resolve) => stream.once("close", resolve));
  stream.destroy();
  await closed;
}

function held(status: SandboxStatusValue) {
  const notices: SandboxStatusNotice[] = [];
  const sandboxStatus = new SandboxStatus("runner_a", (notice) => notices.push(notice));
  const registry = new SandboxRegistry("runner_a", silent);
  const container = new SandboxContainer(null as never, "ctr_1", silent);
  const stream = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  container.channel = new AgentChannel(stream, () => {});
  const sandbox = registry.hold(
    {
      tenant_id: "tnt_a",
      session_id: "ses_1",
      agent_id: null,
      environment: testEnvironment(),
      container_id: container.id,
      workspace_volume: "ws_1",
      substrate_volume: null,
      network: null,
    },
    container,
    status,
  );
  sandboxStatus.watch(sandbox, container.channel);
  return { notices, sandboxStatus, sandbox, stream };
}

describe("SandboxStatus", () => {
  it("records a transition for the call and publishes it with the error's code", () => {
    const { notices, sandboxStatus } = held("ready");
    const transitions: SandboxStatusValue[] = [];
    sandboxStatus.notify("tnt_a", "ses_1", "provisioning", transitions);
    sandboxStatus.notify("tnt_a", "ses_1", "ready", transitions);
    expect(transitions).toEqual(["provisioning", "ready"]);
    expect(notices.map((notice) => notice.status)).toEqual(["provisioning", "ready"]);
    expect(notices[0]).toMatchObject({ tenant_id: "tnt_a", session_id: "ses_1", runner_id: "runner_a" });
    expect(notices[0]?.error).toBeUndefined();
  });

  it("turns a ready sandbox whose channel dies to error", async () => {
    const { notices, sandbox, stream } = held("ready");
    await end(stream);
    expect(sandbox.status).toBe("error");
    expect(notices).toEqual([
      expect.objectContaining({
        status: "error",
        error: expect.objectContaining({ code: "sandbox_channel_closed" }),
      }),
    ]);
  });

  it("leaves a sandbox that is not ready, or a runner that is stopping, alone", async () => {
    const closed = held("closed");
    await end(closed.stream);
    expect(closed.sandbox.status).toBe("closed");
    expect(closed.notices).toEqual([]);

    const stopping = held("ready");
    stopping.sandboxStatus.stop();
    await end(stopping.stream);
    expect(stopping.sandbox.status).toBe("ready");
    expect(stopping.notices).toEqual([]);
  });
});
