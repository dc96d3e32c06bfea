import { connect, type Socket } from "node:net";
import { ApiError } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process";

// Issue #8 point 12: an oversized body gets its 413 whatever the client does: one that asks first
// (`Expect: 100-continue`) is answered before it sends the body, and one that keeps writing reads the
// 413 instead of a connection reset. Raw sockets, because HTTP clients hide both behaviours.

const BODY_LIMIT = 2_048;
/** What the slow client sends in all: 32 times the limit, in 32 pieces. */
const TOTAL = 32 * BODY_LIMIT;
const PIECES = 32;
let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGatewayProcess({ env: { GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
});

/** Half-open allowed: like a real uploader, the client goes on writing after the server's FIN. */
function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: gateway.port, host: "127.0.0.1", allowHalfOpen: true }, () =>
      resolve(socket),
    );
    socket.once("error", reject);
  });
}

/** What the server sent until it closed the connection (or a reset, reported as `error`). */
function collect(socket: Socket): Promise<{ text: string; error: string | null }> {
  return new Promise((resolve) => {
    let text = "";
    let error: string | null = null;
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message;
    });
    socket.on("close", () => resolve({ text, error }));
  });
}

function head(path: string, contentLength: number | "chunked", extra: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    "host: 127.0.0.1",
    `authorization: Bearer ${gateway.ownerKey}`,
    "content-type: application/json",
    contentLength === "chunked" ? "transfer-encoding: chunked" : `content-length: ${contentLength}`,
    ...extra,
    "",
    "",
  ].join("\r\n");
}

function expect413(text: string) {
  expect(text.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  expect(ApiError.parse(JSON.parse(body)).error.type).toBe("payload_too_large_error");
}

describe("an oversized body", () => {
  it("is refused before the body when the client sends Expect: 100-continue", async () => {
    const socket = await open();
    const first = new Promise<string>((resolve) =>
      socket.once("data", (chunk: Buffer) => resolve(chunk.toString())),
    );
    const rest = collect(socket);
    socket.write(head("/v1/agents", 10 * BODY_LIMIT, ["expect: 100-continue"]));
    const answer = await first;
    // The first thing back is the 413, not an invitation to send the body.
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 413 Payload Too Large");
    socket.end();
    expect413((await rest).text);
  });

  it.each([
    ["with a Content-Length", TOTAL],
    ["chunked", "chunked" as const],
  ])("%s, from a client that keeps writing, is answered with a 413 and not a reset", async (_, length) => {
    const socket = await open();
    const received = collect(socket);
    socket.write(head("/v1/agents", length));
    // A slow client: the body arrives in pieces, well past the limit, long after the 413 was sent.
    const piece = "x".repeat(TOTAL / PIECES);
    const chunk = length === "chunked" ? `${piece.length.toString(16)}\r\n${piece}\r\n` : piece;
    for (let index = 0; index < PIECES && !socket.destroyed; index++) {
      socket.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!socket.destroyed) socket.end(length === "chunked" ? "0\r\n\r\n" : "");
    const { text, error } = await received;
    expect(error).toBeNull();
    expect413(text);
  });
});
