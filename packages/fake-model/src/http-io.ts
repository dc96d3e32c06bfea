import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { StreamFrame } from "./reply-plan";

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export type BodyResult =
  | { ok: true; body: unknown; raw: Buffer }
  | { ok: false; status: 400 | 413; message: string };

export async function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > MAX_BODY_BYTES) return { ok: false, status: 413, message: "request body too large" };
    parts.push(part);
  }
  const raw = Buffer.concat(parts);
  if (raw.length === 0) return { ok: true, body: undefined, raw };
  try {
    return { ok: true, body: JSON.parse(raw.toString("utf8")), raw };
  } catch {
    return { ok: false, status: 400, message: "request body is not valid JSON" };
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Resolves false when `signal` aborted the wait (the client went away). */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes frames as an event stream, pausing `gapMs` before each output frame but the first, as a
 * model pauses between tokens; stops as soon as the client is gone. With no pause to keep, the head
 * and every frame leave in one write: the same bytes, without a write per frame (in benchmarks the
 * fake shares the machine with the platform it measures).
 */
export async function streamFrames(
  res: ServerResponse,
  frames: readonly StreamFrame[],
  gapMs: number,
  signal: AbortSignal,
  headers: Record<string, string>,
  /** Called as each output frame is handed to the socket. */
  onOutput: () => void,
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
  if (gapMs <= 0) {
    res.end(frames.map((frame) => frame.text).join(""));
    for (const frame of frames) if (frame.output) onOutput();
    return;
  }
  res.flushHeaders();
  let outputSent = false;
  for (const frame of frames) {
    if (frame.output && outputSent && !(await pause(gapMs, signal))) return;
    if (signal.aborted) return;
    res.write(frame.text);
    if (frame.output) onOutput();
    outputSent ||= frame.output;
  }
  res.end();
}
