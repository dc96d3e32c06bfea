import { Transform, type TransformCallback } from "node:stream";

// What comes back over the bridge from the sandbox is parsed here, in the root runner that serves
// every tenant (Playwright's WebSocket client, then JSON.parse). It comes from a process inside the
// sandbox, so it is bounded before Playwright sees a byte: the HTTP upgrade answer, each WebSocket
// frame and each message (a frame with its continuations). Past a bound the connection is cut, the
// session's browser call fails, and nothing else is touched. Playwright's own limit (256 MiB per
// message, held in memory and parsed) is far above what a page's CDP traffic needs.

/** The upgrade answer's head, up to its blank line. */
export const MAX_HANDSHAKE_BYTES = 16 * 1024;
/** One message: a full-page screenshot in base64 is the largest thing the tools ask for. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** A control frame (close, ping, pong) carries at most 125 bytes (RFC 6455 §5.5). */
const MAX_CONTROL_PAYLOAD = 125;

export class DevtoolsLimitError extends Error {}

/**
 * Passes the browser's side of a DevTools WebSocket connection through unchanged, and fails the stream
 * as soon as the handshake, a frame or a message passes its bound.
 */
export function devtoolsGuard(maxMessageBytes = MAX_MESSAGE_BYTES): Transform {
  let handshake: Buffer | null = Buffer.alloc(0);
  /** Bytes of a frame header seen so far (a header may arrive split across chunks). */
  let header = Buffer.alloc(0);
  /** Payload bytes still to pass through for the current frame. */
  let payloadLeft = 0;
  /** Bytes of the message being assembled from a frame and its continuations. */
  let messageBytes = 0;

  function frameHeader(): string | null {
    if (header.length < 2) return null;
    const byte0 = header[0] as number;
    const byte1 = header[1] as number;
    const lengthCode = byte1 & 0x7f;
    const extended = lengthCode === 126 ? 2 : lengthCode === 127 ? 8 : 0;
    const masked = (byte1 & 0x80) !== 0;
    const size = 2 + extended + (masked ? 4 : 0);
    if (header.length < size) return null;
    const length =
      extended === 0
        ? lengthCode
        : extended === 2
          ? header.readUInt16BE(2)
          : safeLength(header.readBigUInt64BE(2));
    const opcode = byte0 & 0x0f;
    const final = (byte0 & 0x80) !== 0;
    if (opcode >= 0x8) {
      if (length > MAX_CONTROL_PAYLOAD || !final) return "a control frame past 125 bytes";
    } else {
      messageBytes = opcode === 0 ? messageBytes + length : length;
      if (messageBytes > maxMessageBytes) {
        return `a DevTools message past ${maxMessageBytes} bytes`;
      }
      if (final) messageBytes = 0;
    }
    payloadLeft = length;
    header = header.subarray(size);
    return "";
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      let rest = chunk;
      if (handshake !== null) {
        const seen = Buffer.concat([handshake, rest]);
        const end = seen.indexOf("\r\n\r\n");
        if (end === -1) {
          if (seen.length > MAX_HANDSHAKE_BYTES) {
            return done(new DevtoolsLimitError(`a DevTools handshake past ${MAX_HANDSHAKE_BYTES} bytes`));
          }
          handshake = seen;
          return done(null, chunk);
        }
        if (end + 4 > MAX_HANDSHAKE_BYTES) {
          return done(new DevtoolsLimitError(`a DevTools handshake past ${MAX_HANDSHAKE_BYTES} bytes`));
        }
        // What the chunk carried past the head (never bytes of an earlier chunk) is frames.
        rest = seen.subarray(end + 4);
        handshake = null;
      }
      while (rest.length > 0) {
        if (payloadLeft > 0) {
          const take = Math.min(payloadLeft, rest.length);
          payloadLeft -= take;
          rest = rest.subarray(take);
          continue;
        }
        const need = Math.min(rest.length, 14 - header.length);
        header = Buffer.concat([header, rest.subarray(0, need)]);
        rest = rest.subarray(need);
        const verdict = frameHeader();
        if (verdict === null) continue;
        if (verdict !== "") return done(new DevtoolsLimitError(verdict));
        // The header read is 14 bytes at most; what it took past the frame's own header is payload.
        rest = Buffer.concat([header, rest]);
        header = Buffer.alloc(0);
      }
      done(null, chunk);
    },
  });
}

function safeLength(length: bigint): number {
  return length > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(length);
}
