import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, WakeloopApiError } from "./client";

/*
 * The event stream's reconnection, against an HTTP server that answers as the gateway does when it
 * cannot serve for now (503 with Retry-After) or at all (404), then streams events as SSE.
 */

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;

afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves `answers` in order, one a request (the last one again once they run out). */
async function serve(answers: Answer[]): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  server = createServer((req, res) => {
    requests.push(req);
    (answers[requests.length - 1] ?? (answers.at(-1) as Answer))(req, res);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const unavailable: Answer = (_req, res) => {
  res.writeHead(503, { "content-type": "application/json", "retry-after": "0" });
  res.end(JSON.stringify({ error: { type: "unavailable", message: "retry later" } }));
};

function events(...seqs: number[]): Answer {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const seq of seqs) {
      const event = { id: `sevt_${seq}`, seq, type: "session.status_running", session_id: "sesn_a" };
      res.write(`id: ${seq}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  };
}

describe("events.stream", () => {
  it("asks again after a 503 and resumes after the last event it saw", async () => {
    const { url, requests } = await serve([unavailable, events(1), unavailable, events(1, 2)]);
    const client = createClient({ baseUrl: url, apiKey: "wl_test" });
    const stop = new AbortController();
    const seen: number[] = [];
    for await (const event of client.events.stream("sesn_a", { signal: stop.signal })) {
      seen.push(event.seq);
      if (seen.length === 2) stop.abort();
    }
    expect(seen).toEqual([1, 2]);
    expect(requests.map((req) => req.headers["last-event-id"])).toEqual(["0", "0", "1", "1"]);
  });

  it("throws an error status it cannot outwait, without asking again", async () => {
    const { url, requests } = await serve([
      (_req, res) => {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "not_found", message: "no such session" } }));
      },
    ]);
    const client = createClient({ baseUrl: url, apiKey: "wl_test" });
    const stream = client.events.stream("sesn_a");
    await expect(stream.next()).rejects.toEqual(expect.any(WakeloopApiError));
    await expect(client.events.stream("sesn_a").next()).rejects.toMatchObject({ status: 404 });
    expect(requests).toHaveLength(2);
  });

  it("asks for deltas when told, yields them between events, and resumes after the last stored event", async () => {
    const delta = (text: string) => ({
      type: "agent.message_delta",
      ephemeral: true,
      session_id: "sesn_a",
      wake_id: "wake_1",
      model_request_start_id: "sevt_1",
      attempt: 1,
      index: 0,
      text,
    });
    const withDeltas: Answer = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const event = { id: "sevt_1", seq: 1, type: "span.model_request_start", session_id: "sesn_a" };
      res.write(`id: 1\ndata: ${JSON.stringify(event)}\n\n`);
      for (const text of ["Hel", "lo"])
        res.write(`event: agent.message_delta\ndata: ${JSON.stringify(delta(text))}\n\n`);
      res.end();
    };
    const { url, requests } = await serve([withDeltas, events(2)]);
    const client = createClient({ baseUrl: url, apiKey: "wl_test" });
    const stop = new AbortController();
    const seen: string[] = [];
    for await (const item of client.events.stream("sesn_a", { signal: stop.signal, deltas: true })) {
      seen.push(item.type === "agent.message_delta" ? item.text : item.type);
      if (seen.length === 4) stop.abort();
    }
    expect(seen).toEqual(["span.model_request_start", "Hel", "lo", "session.status_running"]);
    expect(requests.map((req) => [req.url, req.headers["last-event-id"]])).toEqual([
      ["/v1/sessions/sesn_a/events/stream?deltas=true", "0"],
      ["/v1/sessions/sesn_a/events/stream?deltas=true", "1"],
    ]);
  });
});
