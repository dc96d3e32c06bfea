import { SessionEvent, StreamDelta } from "@wakeloop/contracts";

/** A minimal Server-Sent Events reader over fetch, for tests: it records frames as they arrive. */

export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: SessionEvent;
}

/** A live delta frame, with how many stored-event frames had arrived before it. */
export interface SseDeltaFrame {
  id: string | undefined;
  event: string | undefined;
  data: StreamDelta;
  afterFrames: number;
}

export interface SseConnection {
  status: number;
  /** The stored events. */
  frames: SseFrame[];
  deltas: SseDeltaFrame[];
  comments: string[];
  /** The server ended the response. */
  ended: boolean;
  /** Resolves once `probe` holds for what has arrived; rejects after `timeoutMs`. */
  until(probe: (connection: SseConnection) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  const connection: SseConnection = {
    status: response.status,
    frames: [],
    deltas: [],
    comments: [],
    ended: false,
    async until(probe, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!probe(connection)) {
        if (Date.now() > deadline) {
          throw new Error(
            `SSE condition not met in ${timeoutMs} ms; seqs: ${connection.frames.map((f) => f.id)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      abort.abort();
      await reading.catch(() => undefined);
    },
  };
  const reading = read(response, connection).then(() => {
    connection.ended = true;
  });
  return connection;
}

async function read(response: Response, connection: SseConnection): Promise<void> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      parseFrame(buffer.slice(0, end), connection);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
    }
  }
}

function parseFrame(text: string, connection: SseConnection): void {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) {
      connection.comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(":");
    fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
  }
  const data = fields.get("data");
  if (data === undefined) return;
  const json: unknown = JSON.parse(data);
  const delta = StreamDelta.safeParse(json);
  if (delta.success) {
    const afterFrames = connection.frames.length;
    connection.deltas.push({
      id: fields.get("id"),
      event: fields.get("event"),
      data: delta.data,
      afterFrames,
    });
    return;
  }
  connection.frames.push({
    id: fields.get("id"),
    event: fields.get("event"),
    data: SessionEvent.parse(json),
  });
}
