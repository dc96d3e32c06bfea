import { once } from "node:events";
import { get, type IncomingMessage } from "node:http";
import { Agent, type EventPayload, Session, type StreamDelta } from "@wakeloop/contracts";
import { append } from "@wakeloop/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";
import { openSse, type SseConnection } from "../testing/sse-client";

/** With the outbox relay running: committed events reach JetStream, as in production. */
let gw: GatewayFixture;
/** Without a relay: nothing reaches the bus unless a test publishes it, so Postgres must fill in. */
let quiet: GatewayFixture;
const open: SseConnection[] = [];

beforeAll(async () => {
  [gw, quiet] = await Promise.all([startGateway({ relay: true }), startGateway()]);
});
afterAll(async () => {
  await Promise.all(open.map((connection) => connection.close()));
  await Promise.all([gw?.close(), quiet?.close()]);
});

async function newSession(fixture: GatewayFixture): Promise<string> {
  const key = fixture.tenant.ownerKey;
  const agent = Agent.parse((await fixture.request("POST", "/v1/agents", { key, body: agentBody() })).body);
  return Session.parse(
    (await fixture.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
  ).id;
}

async function stream(
  fixture: GatewayFixture,
  sessionId: string,
  headers: Record<string, string> = {},
  query = "",
) {
  const connection = await openSse(`${fixture.url}/v1/sessions/${sessionId}/events/stream${query}`, {
    authorization: `Bearer ${fixture.tenant.ownerKey}`,
    ...headers,
  });
  open.push(connection);
  return connection;
}

const agentMessage = (text: string): EventPayload => ({
  type: "agent.message",
  content: [{ type: "text", text }],
});

function appendMessages(fixture: GatewayFixture, sessionId: string, texts: string[]) {
  return append(fixture.db, { tenantId: fixture.tenant.id, sessionId, events: texts.map(agentMessage) });
}

const seqs = (connection: SseConnection) => connection.frames.map((frame) => frame.data.seq);
const lastSeq = (connection: SseConnection) => connection.frames.at(-1)?.data.seq ?? 0;

describe("GET /v1/sessions/{id}/events/stream", () => {
  it("replays after Last-Event-ID, then forwards live events as they commit", async () => {
    const sessionId = await newSession(gw);
    const history = await appendMessages(gw, sessionId, ["one", "two", "three"]);

    const connection = await stream(gw, sessionId, { "last-event-id": "1" });
    expect(connection.status).toBe(200);
    await connection.until((c) => lastSeq(c) === 3);
    const live = await appendMessages(gw, sessionId, ["four", "five"]);
    await connection.until((c) => lastSeq(c) === 5);

    expect(seqs(connection)).toEqual([2, 3, 4, 5]);
    const [, second] = history;
    expect(connection.frames[0]).toEqual({ id: "2", event: "agent.message", data: second });
    expect(connection.frames.slice(2).map((frame) => frame.data)).toEqual(live);
  });

  it("starts after ?after_seq when no Last-Event-ID is sent", async () => {
    const sessionId = await newSession(gw);
    await appendMessages(gw, sessionId, ["a", "b", "c"]);
    const connection = await stream(gw, sessionId, {}, "?after_seq=2");
    await connection.until((c) => lastSeq(c) === 3);
    expect(seqs(connection)).toEqual([3]);
  });

  it("misses nothing and repeats nothing across a reconnect while events keep committing", async () => {
    const sessionId = await newSession(gw);
    let appended = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const batch = Array.from({ length: 1 + (appended % 3) }, (_, index) => `m${appended + index}`);
        await appendMessages(gw, sessionId, batch);
        appended += batch.length;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    const first = await stream(gw, sessionId);
    await first.until((c) => c.frames.length >= 10);
    await first.close();
    const resumeAfter = lastSeq(first);
    // Events keep committing while no client is connected.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await stream(gw, sessionId, { "last-event-id": String(resumeAfter) });
    await second.until((c) => c.frames.length >= 10);
    writing = false;
    await writer;
    await second.until((c) => lastSeq(c) === appended);

    const received = [...seqs(first), ...seqs(second)];
    expect(received).toEqual(Array.from({ length: appended }, (_, index) => index + 1));
  });

  it("fills a gap from Postgres when the bus skipped events", async () => {
    const sessionId = await newSession(quiet);
    const connection = await stream(quiet, sessionId);
    // Let the stream finish its initial read of Postgres, so only the live path can deliver these.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const events = await appendMessages(quiet, sessionId, ["x", "y", "z"]);
    const latest = events.at(-1);
    // Only the newest event reaches the bus, as after a slow-consumer drop.
    quiet.bus.nc.publish(
      quiet.bus.subjects.evt(quiet.tenant.id, sessionId, "agent.message"),
      JSON.stringify(latest),
    );
    await connection.until((c) => lastSeq(c) === 3, 2_000);
    expect(seqs(connection)).toEqual([1, 2, 3]);
  });

  it("sends keep-alive comments that also catch up from Postgres, and ends streams when the server closes", async () => {
    const fixture = await startGateway({ sseKeepAliveMs: 200 });
    try {
      const sessionId = await newSession(fixture);
      const connection = await stream(fixture, sessionId);
      await appendMessages(fixture, sessionId, ["only in postgres"]);
      await connection.until((c) => c.comments.includes("keep-alive") && lastSeq(c) === 1, 5_000);
      expect(seqs(connection)).toEqual([1]);
    } finally {
      // Resolves only if the open stream is ended; a hanging close fails the test by timeout.
      await fixture.close();
    }
  });

  it("interleaves live deltas only when asked, without an id, and drops those of an ended request", async () => {
    const sessionId = await newSession(gw);
    const withDeltas = await stream(gw, sessionId, {}, "?deltas=true");
    const without = await stream(gw, sessionId);
    await withDeltas.until((c) => c.comments.includes("stream open"));
    await without.until((c) => c.comments.includes("stream open"));
    const delta = (request: string, text: string): StreamDelta => ({
      type: "agent.message_delta",
      ephemeral: true,
      session_id: sessionId,
      wake_id: "wake_1",
      model_request_start_id: request,
      attempt: 1,
      index: 0,
      text,
    });
    for (const text of ["Hel", "lo"]) gw.bus.publishDelta(gw.tenant.id, delta("sevt_first", text));
    await withDeltas.until((c) => c.deltas.length === 2);
    expect(withDeltas.deltas.map((frame) => [frame.id, frame.event])).toEqual([
      [undefined, "agent.message_delta"],
      [undefined, "agent.message_delta"],
    ]);

    // The stored end of the request closes its preview: a late delta of it is not sent, a new one is.
    const [end] = await append(gw.db, {
      tenantId: gw.tenant.id,
      sessionId,
      events: [
        {
          type: "span.model_request_end",
          model_request_start_id: "sevt_first",
          model_usage: {
            input_tokens: 1,
            output_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
          is_error: false,
        },
      ],
    });
    await withDeltas.until((c) => lastSeq(c) === end?.seq);
    gw.bus.publishDelta(gw.tenant.id, delta("sevt_first", " late"));
    gw.bus.publishDelta(gw.tenant.id, delta("sevt_second", "next"));
    await withDeltas.until((c) => c.deltas.length === 3);
    expect(withDeltas.deltas.at(-1)).toMatchObject({ data: { text: "next" }, afterFrames: 1 });

    await without.until((c) => lastSeq(c) === end?.seq);
    expect(without.deltas).toEqual([]);
    const refused = await gw.request("GET", `/v1/sessions/${sessionId}/events/stream?deltas=yes`, {
      key: gw.tenant.ownerKey,
    });
    expect(refused.status).toBe(400);
  });

  it("drops live deltas for a client that is behind, never a stored event", async () => {
    const sessionId = await newSession(gw);
    const request = get(`${gw.url}/v1/sessions/${sessionId}/events/stream?deltas=true`, {
      headers: { authorization: `Bearer ${gw.tenant.ownerKey}`, accept: "text/event-stream" },
    });
    const [response] = (await once(request, "response")) as [IncomingMessage];
    response.setEncoding("utf8");
    let text = "";
    response.on("data", (chunk: string) => {
      text += chunk;
    });
    await expect.poll(() => text).toContain("stream open");
    // The client stops reading; far more deltas come than the sockets between us can hold (32 MB).
    response.pause();
    const piece = "x".repeat(16_384);
    const sent = 2_000;
    for (let index = 0; index < sent; index++)
      gw.bus.publishDelta(gw.tenant.id, {
        type: "agent.message_delta",
        ephemeral: true,
        session_id: sessionId,
        wake_id: "wake_1",
        model_request_start_id: "sevt_1",
        attempt: 1,
        index: 0,
        text: piece,
      });
    await gw.bus.nc.flush();
    const stored = await appendMessages(gw, sessionId, ["a", "b", "c"]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    response.resume();
    await expect.poll(() => text, { timeout: 20_000 }).toContain(`id: ${stored.at(-1)?.seq}\n`);
    request.destroy();
    for (const event of stored) expect(text).toContain(`id: ${event.seq}\nevent: agent.message\n`);
    const delivered = text.split("event: agent.message_delta\n").length - 1;
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(sent);
  });
});
