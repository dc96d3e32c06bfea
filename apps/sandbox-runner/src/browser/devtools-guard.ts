import { Transform, type TransformCallback } from "node:stream";

// What comes back over the bridge from the sandbox is parsed here, in the root runner that serves
// every tenant (Playwright's WebSocket client, then JSON.parse). It comes from Chromium, which renders
// what the session chooses, so it is bounded before Playwright has a whole message: the HTTP upgrade
// answer, each WebSocket frame and each message (a frame with its continuations). Playwright's own
// limit is 256 MiB per message, and it keeps some events (a page's last 200 console messages, with
// their text): a page logging large strings in a loop would pile them up in the runner. So only an
// answer to one of Playwright's own requests (`{"id":…`: a screenshot, an evaluation) may be large;
// every other message (an event) is held to MAX_EVENT_BYTES. Past a bound the connection is cut, the
// session's browser call fails (the next one reconnects), and nothing else is touched.

/** The upgrade answer's head, up to its blank line. */
export const MAX_HANDSHAKE_BYTES = 16 * 1024;
/** An answer: a full-page screenshot in base64 is the largest thing the tools ask for. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** An event (console message, exception, network notice, …). */
export const MAX_EVENT_BYTES = 256 * 1024;
/** A control frame (close, ping, pong) carries at most 125 bytes (RFC 6455 §5.5). */
const MAX_CONTROL_PAYLOAD = 125;
/** How Chromium starts an answer to a request; an event starts with its method. */
const ANSWER_START = Buffer.from('{"id":');

export class DevtoolsLimitError extends Error {}

export type DevtoolsBounds = { maxMessageBytes: number; maxEventBytes: number };

/**
 * Passes the browser's side of a DevTools WebSocket connection through unchanged, and fails the stream
 * as soon as the handshake, a frame, an answer or an event passes its bound.
 */
export function devtoolsGuard(
  bounds: DevtoolsBounds = { maxMessageBytes: MAX_MESSAGE_BYTES, maxEventBytes: MAX_EVENT_BYTES },
): Transform {
  let handshake: Buffer | null = Buffer.alloc(0);
  /** Bytes of a frame header seen so far (a header may arrive split across chunks). */
  let header = Buffer.alloc(0);
  /** Payload bytes still to pass through for the current frame. */
  let payloadLeft = 0;
  /** Bytes of the message being assembled from a frame and its continuations. */
  let messageBytes = 0;
  /** The first payload bytes of the message, until they say whether it is an answer. */
  let start: Buffer | null = null;
  let answer = false;
  /** Whether the frame being read ends its message, and whether it is a control frame (not part of one). */
  let finalFrame = true;
  let control = false;

  /** Why the message so far passes a bound, or null. */
  function overBound(): string | null {
    if (messageBytes > bounds.maxMessageBytes)
      return `a DevTools message past ${bounds.maxMessageBytes} bytes`;
    if (start === null && !answer && messageBytes > bounds.maxEventBytes) {
      return `a DevTools event past ${bounds.maxEventBytes} bytes`;
    }
    return null;
  }

  /** Reads a complete frame header: "" when read, null when more bytes are needed, else why not. */
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
    // RSV bits mean an extension: compression would make every bound here one on compressed bytes.
    if ((byte0 & 0x70) !== 0) return "a compressed or extended DevTools frame (none was negotiated)";
    payloadLeft = length;
    header = header.subarray(size);
    control = opcode >= 0x8;
    if (control) {
      return length > MAX_CONTROL_PAYLOAD || !final ? "a control frame past 125 bytes" : "";
    }
    finalFrame = final;
    if (opcode === 0) {
      messageBytes += length;
    } else {
      messageBytes = length;
      start = Buffer.alloc(0);
      answer = false;
    }
    return overBound() ?? "";
  }

  /** Takes the message's first payload bytes of `bytes` until they say whether it is an answer. */
  function readStart(bytes: Buffer): string | null {
    if (start === null) return null;
    start = Buffer.concat([start, bytes.subarray(0, ANSWER_START.length - start.length)]);
    if (start.length < ANSWER_START.length && (payloadLeft > bytes.length || !finalFrame)) return null;
    answer = start.equals(ANSWER_START);
    start = null;
    return overBound();
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      let rest = chunk;
      if (handshake !== null) {
        const seen = Buffer.concat([handshake, rest]);
        const end = seen.indexOf("\r\n\r\n");
        if ((end === -1 ? seen.length : end + 4) > MAX_HANDSHAKE_BYTES) {
          return done(new DevtoolsLimitError(`a DevTools handshake past ${MAX_HANDSHAKE_BYTES} bytes`));
        }
        if (end === -1) {
          handshake = seen;
          return done(null, chunk);
        }
        // What the chunk carried past the head (never bytes of an earlier chunk) is frames.
        rest = seen.subarray(end + 4);
        handshake = null;
      }
      while (rest.length > 0) {
        if (payloadLeft > 0) {
          const take = Math.min(payloadLeft, rest.length);
          const verdict = control ? null : readStart(rest.subarray(0, take));
          if (verdict !== null) return done(new DevtoolsLimitError(verdict));
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

/**
 * The runner's side of the upgrade: Playwright's WebSocket client offers permessage-deflate, which would
 * let a small compressed message inflate to Playwright's 256 MiB inside the runner. The offer is taken
 * out of the request head, so Chromium sends plain frames the guard can measure.
 */
export function withoutCompressionOffer(): Transform {
  let head: Buffer | null = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (head === null) return done(null, chunk);
      const seen = Buffer.concat([head, chunk]);
      const end = seen.indexOf("\r\n\r\n");
      if (end === -1) {
        if (seen.length > MAX_HANDSHAKE_BYTES)
          return done(new DevtoolsLimitError("an upgrade request past its bound"));
        head = seen;
        return done();
      }
      head = null;
      const lines = seen
        .subarray(0, end)
        .toString("latin1")
        .split("\r\n")
        .filter((line) => !/^sec-websocket-extensions\s*:/i.test(line));
      done(
        null,
        Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), seen.subarray(end + 4)]),
      );
    },
  });
}

function safeLength(length: bigint): number {
  return length > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(length);
}
