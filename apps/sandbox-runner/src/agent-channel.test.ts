import { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { AgentChannel } from "./agent-channel";

// The channel against a stream the test writes as the container would: Docker frames of stdout.

function frame(payload: string): Buffer {
  const header = Buffer.alloc(8);
  header[0] = 1;
  header.writeUInt32BE(Buffer.byteLength(payload), 4);
  return Buffer.concat([header, Buffer.from(payload)]);
}

function channel() {
  const stream = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  const stderr: string[] = [];
  return { stream, stderr, channel: new AgentChannel(stream, (text) => stderr.push(text)) };
}

describe("AgentChannel", () => {
  it("resolves a call with its reply", async () => {
    const { stream, channel: agent } = channel();
    const answer = agent.call("call.cancel", { callId: "call_1" });
    stream.push(frame('{"id":1,"ok":true,"result":{"cancelled":true}}\n'));
    await expect(answer).resolves.toEqual({ cancelled: true });
  });

  it("rejects a call the agent answered with an error, keeping the channel open", async () => {
    const { stream, channel: agent } = channel();
    const answer = agent.call("fs.stat", { path: "missing" });
    stream.push(frame('{"id":1,"ok":false,"error":{"code":"path_not_found","message":"missing"}}\n'));
    await expect(answer).rejects.toMatchObject({ name: "AgentCallError", code: "path_not_found" });
    expect(agent.closed).toBe(false);
  });

  it.each([
    ["null", "null\n"],
    ["a reply without its error", '{"id":1,"ok":false}\n'],
    ["not JSON", `${"x".repeat(1_000)}\n`],
    ["a result that is not the op's", '{"id":1,"ok":true,"result":{"processes":[{"processId":7}]}}\n'],
    [
      "a reply nested past MAX_JSON_DEPTH",
      `{"id":1,"ok":true,"result":${"[".repeat(5_000)}${"]".repeat(5_000)}}\n`,
    ],
  ])("closes on %s instead of throwing, failing the calls in flight", async (_what, line) => {
    const { stream, stderr, channel: agent } = channel();
    const answer = agent.call("proc.list", {});
    stream.push(frame(line));
    await expect(answer).rejects.toMatchObject({ code: "sandbox_channel_closed" });
    expect(agent.closed).toBe(true);
    expect(stderr.join("\n")).toContain("closing it");
    await expect(agent.call("proc.list", {})).rejects.toMatchObject({ code: "sandbox_channel_closed" });
  });
});
