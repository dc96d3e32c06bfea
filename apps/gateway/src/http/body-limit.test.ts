import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;

beforeAll(async () => {
  gw = await startGateway({ bodyLimitBytes: 4_096, discardBytes: 16_384 });
});
afterAll(async () => {
  await gw?.close();
});

/** Sends the head, waits for the interim answer, then sends the body; resolves with all that came back. */
function expectContinue(body: string): Promise<{ interim: string; all: string }> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let all = "";
    let interim = "";
    socket.on("data", (chunk: Buffer) => {
      all += chunk.toString();
      if (interim === "") {
        interim = all.split("\r\n")[0] ?? "";
        socket.write(body);
      }
      if (/\r\n\r\n\{.*\}$/s.test(all.slice(all.indexOf("HTTP/1.1 200")))) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ interim, all }));
    socket.write(
      [
        "POST /v1/agents HTTP/1.1",
        "host: 127.0.0.1",
        `authorization: Bearer ${gw.tenant.ownerKey}`,
        "content-type: application/json",
        `content-length: ${Buffer.byteLength(body)}`,
        "expect: 100-continue",
        "",
        "",
      ].join("\r\n"),
    );
  });
}

describe("Expect: 100-continue", () => {
  it("invites a body within the limit and then handles the request as usual", async () => {
    const { interim, all } = await expectContinue(JSON.stringify(agentBody({ name: "continued" })));
    expect(interim).toBe("HTTP/1.1 100 Continue");
    expect(all).toContain("HTTP/1.1 200 OK");
    expect(all).toContain('"name":"continued"');
  });
});

describe("a refused body that does not end", () => {
  it("is read only up to the discard bound, then the connection is closed after the 413", async () => {
    const { port } = new URL(gw.url);
    const socket = connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
    });
    socket.on("error", () => {});
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(
      [
        "POST /v1/agents HTTP/1.1",
        "host: 127.0.0.1",
        `authorization: Bearer ${gw.tenant.ownerKey}`,
        "content-type: application/json",
        `content-length: ${10 * 1_048_576}`,
        "",
        "",
      ].join("\r\n"),
    );
    // Far more than the bound, far less than the declared length: the server must stop waiting.
    let serverGone = false;
    void closed.then(() => {
      serverGone = true;
    });
    for (let sent = 0; sent < 1_048_576 && !serverGone; sent += 8_192) {
      socket.write("x".repeat(8_192));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await closed;
    expect(received.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    expect(received.toLowerCase()).toContain("connection: close");
  });
});
