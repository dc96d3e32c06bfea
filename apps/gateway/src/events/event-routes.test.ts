import {
  Agent,
  ApiError,
  type ControlMessage,
  ListEventsResponse,
  PendingResponse,
  PostEventsResponse,
  Session,
} from "@wakeloop/contracts";
import { append } from "@wakeloop/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";
import { postUserEvents } from "./post-user-events";

let gw: GatewayFixture;
let key: string;
let agentId: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
  agentId = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body).id;
});
afterAll(async () => {
  await gw?.close();
});

async function newSession(): Promise<string> {
  return Session.parse((await gw.request("POST", "/v1/sessions", { key, body: { agent: agentId } })).body).id;
}

const message = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

function post(sessionId: string, events: unknown[], headers: Record<string, string> = {}) {
  return gw.request("POST", `/v1/sessions/${sessionId}/events`, { key, body: { events }, headers });
}

async function eventCount(sessionId: string): Promise<number> {
  const rows = await gw.db
    .selectFrom("session_events")
    .select("seq")
    .where("session_id", "=", sessionId)
    .execute();
  return rows.length;
}

describe("POST /v1/sessions/{id}/events", () => {
  it("appends a batch in order and answers 202 with ids and seqs", async () => {
    const sessionId = await newSession();
    const response = await post(sessionId, [message("one"), message("two")]);
    expect(response.status).toBe(202);
    const { events } = PostEventsResponse.parse(response.body);
    expect(events.map((event) => [event.type, event.seq, event.session_id])).toEqual([
      ["user.message", 1, sessionId],
      ["user.message", 2, sessionId],
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(2);
    const session = Session.parse((await gw.request("GET", `/v1/sessions/${sessionId}`, { key })).body);
    expect(session.last_seq).toBe(2);
  });

  it("replays the recorded response for a repeated Idempotency-Key and 409s a different body", async () => {
    const sessionId = await newSession();
    const headers = { "idempotency-key": "req-1" };
    const first = await post(sessionId, [message("once")], headers);
    expect(first.status).toBe(202);
    const again = await post(sessionId, [message("once")], headers);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(PostEventsResponse.parse(again.body)).toEqual(PostEventsResponse.parse(first.body));
    expect(await eventCount(sessionId)).toBe(1);

    const changed = await post(sessionId, [message("twice")], headers);
    expect(changed.status).toBe(409);
    expect(ApiError.parse(changed.body).error.type).toBe("conflict_error");
    const otherSession = await post(await newSession(), [message("once")], headers);
    expect(otherSession.status).toBe(409);
    expect(await eventCount(sessionId)).toBe(1);
  });

  it("appends once when requests with the same key race", async () => {
    const sessionId = await newSession();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => post(sessionId, [message("race")], { "idempotency-key": "race-key" })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(202));
    const ids = responses.map((response) => PostEventsResponse.parse(response.body).events[0]?.id);
    expect(new Set(ids).size).toBe(1);
    expect(await eventCount(sessionId)).toBe(1);
  });

  it("does not record a failed request: the key can be used again after fixing the body", async () => {
    const sessionId = await newSession();
    const headers = { "idempotency-key": "fix-and-retry" };
    expect(
      (
        await post(
          sessionId,
          [{ type: "user.tool_confirmation", tool_use_id: "sevt_x", result: "allow" }],
          headers,
        )
      ).status,
    ).toBe(400);
    expect((await post(sessionId, [message("fixed")], headers)).status).toBe(202);
  });

  it("rejects a confirmation or custom result for an action that is not pending (400 with details)", async () => {
    const sessionId = await newSession();
    const [ask, custom] = await append(gw.db, {
      tenantId: gw.tenant.id,
      sessionId,
      events: [
        {
          type: "agent.tool_use",
          name: "shell_run",
          input: { command: "rm -rf build" },
          evaluated_permission: "ask",
        },
        { type: "agent.custom_tool_use", name: "lookup_order", input: { order: 42 } },
      ],
    });
    if (ask === undefined || custom === undefined) throw new Error("append returned too few events");

    const pending = PendingResponse.parse(
      (await gw.request("GET", `/v1/sessions/${sessionId}/pending`, { key })).body,
    );
    expect(pending.data.map((action) => [action.event_id, action.kind])).toEqual([
      [ask.id, "tool_confirmation"],
      [custom.id, "custom_tool_result"],
    ]);

    const unknown = await post(sessionId, [
      { type: "user.tool_confirmation", tool_use_id: "sevt_nope", result: "allow" },
    ]);
    expect(unknown.status).toBe(400);
    expect(ApiError.parse(unknown.body).error.details).toEqual({
      index: 0,
      tool_use_id: "sevt_nope",
      pending_ids: [ask.id],
    });
    const wrongKind = await post(sessionId, [
      { type: "user.tool_confirmation", tool_use_id: custom.id, result: "allow" },
    ]);
    expect(wrongKind.status).toBe(400);
    expect(await eventCount(sessionId)).toBe(2);

    const answered = await post(sessionId, [
      { type: "user.tool_confirmation", tool_use_id: ask.id, result: "deny", deny_message: "not today" },
      {
        type: "user.custom_tool_result",
        custom_tool_use_id: custom.id,
        content: [{ type: "text", text: "shipped" }],
      },
    ]);
    expect(answered.status).toBe(202);
    const after = PendingResponse.parse(
      (await gw.request("GET", `/v1/sessions/${sessionId}/pending`, { key })).body,
    );
    expect(after.data).toEqual([]);
    const twice = await post(sessionId, [
      { type: "user.tool_confirmation", tool_use_id: ask.id, result: "allow" },
    ]);
    expect(twice.status).toBe(400);
  });

  it("lets exactly one of many racing answers to a pending action through", async () => {
    const sessionId = await newSession();
    const [ask] = await append(gw.db, {
      tenantId: gw.tenant.id,
      sessionId,
      events: [
        { type: "agent.tool_use", name: "shell_run", input: { command: "ls" }, evaluated_permission: "ask" },
      ],
    });
    // Called directly on a pool with a connection for each, so that the answers read the session
    // before any of them appends.
    await Promise.all(Array.from({ length: 8 }, () => sql`SELECT pg_sleep(0.05)`.execute(gw.database.appDb)));
    const answers = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        postUserEvents(gw.database.appDb, {
          tenantId: gw.tenant.id,
          sessionId,
          events: [{ type: "user.tool_confirmation", tool_use_id: ask?.id ?? "", result: "allow" }],
          idempotency: null,
          now: new Date(),
          maxWakesInFlight: 16,
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status === "fulfilled")).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === "rejected") expect(answer.reason).toMatchObject({ code: "action_not_pending" });
    }
    expect(await eventCount(sessionId)).toBe(2);
  });

  it("appends every one of many racing messages, with gapless seqs", async () => {
    const sessionId = await newSession();
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, index) => post(sessionId, [message(`m${index}`)])),
    );
    expect(sent.map((response) => response.status)).toEqual(Array(12).fill(202));
    const seqs = sent
      .map((response) => PostEventsResponse.parse(response.body).events[0]?.seq)
      .sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(seqs).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
  });

  it("publishes an interrupt control message for the worker holding the lease", async () => {
    const sessionId = await newSession();
    const received: ControlMessage[] = [];
    const subscription = gw.bus.subscribeControl(sessionId, (controlMessage) => {
      received.push(controlMessage);
    });
    await gw.bus.nc.flush();
    try {
      const response = await post(sessionId, [message("stop that"), { type: "user.interrupt" }]);
      const interrupt = PostEventsResponse.parse(response.body).events[1];
      await expect
        .poll(() => received, { timeout: 5_000 })
        .toEqual([{ type: "interrupt", session_id: sessionId, event_id: interrupt?.id }]);
    } finally {
      subscription.unsubscribe();
    }
  });
});

describe("the wake a client's events need", () => {
  const wakesOf = (sessionId: string) =>
    gw.db.selectFrom("wakes").selectAll().where("session_id", "=", sessionId).execute();

  /** The wake job last published for the session, as stored on the wake work queue. */
  async function publishedJob(tenantId: string, sessionId: string) {
    const stored = await gw.bus.jsm.streams
      .getMessage(gw.bus.catalog.wakes.stream.name, {
        last_by_subj: gw.bus.subjects.wake(tenantId, sessionId),
      })
      .catch(() => null);
    return stored === null ? null : { msgId: stored.header.get("Nats-Msg-Id"), job: stored.json() };
  }

  /** The transactions that wrote the session's events and its wakes (`xmin`): one when they committed together. */
  async function writers(sessionId: string): Promise<string[]> {
    const { rows } = await sql<{ xid: string }>`
      SELECT xmin::text AS xid FROM session_events WHERE session_id = ${sessionId}
      UNION SELECT xmin::text FROM wakes WHERE session_id = ${sessionId}`.execute(gw.db);
    return rows.map((row) => row.xid);
  }

  it("is opened in the events' commit and its job published, once per session", async () => {
    const sessionId = await newSession();
    expect((await post(sessionId, [message("wake up")])).status).toBe(202);
    const [wake, ...more] = await wakesOf(sessionId);
    expect(more).toEqual([]);
    expect(wake).toMatchObject({ status: "queued", reason: "user_message", attempt: 1 });
    expect(wake?.published_at).not.toBeNull();
    expect(await writers(sessionId)).toHaveLength(1);
    await expect
      .poll(() => publishedJob(gw.tenant.id, sessionId), { timeout: 5_000 })
      .toEqual({
        msgId: `${wake?.id}:1`,
        job: {
          wake_id: wake?.id,
          tenant_id: gw.tenant.id,
          session_id: sessionId,
          attempt: 1,
          reason: "user_message",
          agent_id: agentId,
        },
      });
    // The session has its open wake: a second message joins it.
    expect((await post(sessionId, [message("and this")])).status).toBe(202);
    expect(await wakesOf(sessionId)).toHaveLength(1);
  });

  it("is opened in the commit of events posted with an Idempotency-Key", async () => {
    const sessionId = await newSession();
    expect((await post(sessionId, [message("once")], { "Idempotency-Key": "wake-once" })).status).toBe(202);
    expect(await wakesOf(sessionId)).toMatchObject([{ status: "queued", reason: "user_message" }]);
    expect(await writers(sessionId)).toHaveLength(1);
  });

  it("is the only thing published: the events reach the stream through the outbox relay alone", async () => {
    // This fixture runs no relay, so what the stream holds of the session is what the gateway sent.
    const sessionId = await newSession();
    const { events } = PostEventsResponse.parse((await post(sessionId, [message("wake up")])).body);
    await expect.poll(() => publishedJob(gw.tenant.id, sessionId), { timeout: 5_000 }).not.toBeNull();
    const stream = await gw.bus.jsm.streams.info(gw.bus.catalog.events.stream.name, {
      subjects_filter: gw.bus.subjects.sessionEvents(gw.tenant.id, sessionId),
    });
    expect(stream.state.subjects ?? {}).toEqual({});
    const ids = events.map((event) => event.id);
    // One outbox row for the commit, its messages the events in order.
    const outbox = await sql<{ msg_id: string }>`
      SELECT m->>'id' AS msg_id FROM outbox o, jsonb_array_elements(o.messages) m
      WHERE o.messages->0->>'session_id' = ${sessionId} ORDER BY o.id`.execute(gw.db);
    expect(outbox.rows.map((row) => row.msg_id)).toEqual(ids);
  });

  it("is not opened for events that need none", async () => {
    const sessionId = await newSession();
    expect((await post(sessionId, [{ type: "user.interrupt" }])).status).toBe(202);
    expect(await wakesOf(sessionId)).toEqual([]);
  });

  it("is held, with no job, past the tenant's wakes in flight", async () => {
    const tenant = await gw.newTenant("burst");
    const agent = Agent.parse(
      (await gw.request("POST", "/v1/agents", { key: tenant.ownerKey, body: agentBody() })).body,
    );
    const sessions: string[] = [];
    // The fixture's limit is 16 wakes in flight per tenant.
    for (let index = 0; index < 17; index++) {
      const session = Session.parse(
        (await gw.request("POST", "/v1/sessions", { key: tenant.ownerKey, body: { agent: agent.id } })).body,
      );
      const sent = await gw.request("POST", `/v1/sessions/${session.id}/events`, {
        key: tenant.ownerKey,
        body: { events: [message("go")] },
      });
      expect(sent.status).toBe(202);
      sessions.push(session.id);
    }
    const held = sessions.at(-1) ?? "";
    const published = await Promise.all(sessions.map(async (id) => (await wakesOf(id))[0]?.published_at));
    expect(published.slice(0, 16).every((at) => at !== null && at !== undefined)).toBe(true);
    expect(published[16]).toBeNull();
    await expect.poll(() => publishedJob(tenant.id, sessions[15] ?? ""), { timeout: 5_000 }).not.toBeNull();
    expect(await publishedJob(tenant.id, held)).toBeNull();
  });
});

describe("session changes go through events", () => {
  it("appends session.updated for title, metadata and budget", async () => {
    const sessionId = await newSession();
    const response = await gw.request("POST", `/v1/sessions/${sessionId}`, {
      key,
      body: { title: "Refund for order 42", budget: { max_total_tokens: 9_000 } },
    });
    expect(Session.parse(response.body)).toMatchObject({
      title: "Refund for order 42",
      budget: { max_total_tokens: 9_000 },
      last_seq: 1,
    });
    const events = ListEventsResponse.parse(
      (await gw.request("GET", `/v1/sessions/${sessionId}/events`, { key })).body,
    );
    expect(events.data).toMatchObject([{ type: "session.updated", title: "Refund for order 42" }]);
    expect((await gw.request("POST", `/v1/sessions/${sessionId}`, { key, body: {} })).status).toBe(400);
  });

  it("archives once (terminated, reason archived) and then refuses events with 409", async () => {
    const sessionId = await newSession();
    const first = await gw.request("POST", `/v1/sessions/${sessionId}/archive`, { key });
    expect(Session.parse(first.body)).toMatchObject({ status: "terminated", termination_reason: "archived" });
    const second = await gw.request("POST", `/v1/sessions/${sessionId}/archive`, { key });
    expect(second.status).toBe(200);
    expect(Session.parse(second.body).last_seq).toBe(1);

    const refused = await post(sessionId, [message("anyone there?")]);
    expect(refused.status).toBe(409);
    expect(ApiError.parse(refused.body).error.type).toBe("conflict_error");
    expect(
      (await gw.request("POST", `/v1/sessions/${sessionId}`, { key, body: { title: "x" } })).status,
    ).toBe(409);
    expect(await eventCount(sessionId)).toBe(1);
  });

  it("lists sessions filtered by status and agent", async () => {
    const archived = await newSession();
    await gw.request("POST", `/v1/sessions/${archived}/archive`, { key });
    const idle = await newSession();
    const terminated = (await gw.request("GET", "/v1/sessions?status=terminated&limit=200", { key })).body;
    expect(JSON.stringify(terminated)).toContain(archived);
    expect(JSON.stringify(terminated)).not.toContain(idle);
    const byAgent = (
      await gw.request("GET", `/v1/sessions?agent_id=${agentId}&status=idle&limit=200`, { key })
    ).body;
    expect(JSON.stringify(byAgent)).toContain(idle);
  });
});

describe("GET /v1/sessions/{id}/events", () => {
  it("pages by seq with next_after_seq", async () => {
    const sessionId = await newSession();
    await post(sessionId, ["1", "2", "3", "4", "5"].map(message));
    const page = async (query: string) =>
      ListEventsResponse.parse(
        (await gw.request("GET", `/v1/sessions/${sessionId}/events?${query}`, { key })).body,
      );

    const first = await page("limit=2");
    expect(first.data.map((event) => event.seq)).toEqual([1, 2]);
    expect(first.next_after_seq).toBe(2);
    const second = await page(`after_seq=${first.next_after_seq}&limit=2`);
    expect(second.data.map((event) => event.seq)).toEqual([3, 4]);
    const last = await page(`after_seq=${second.next_after_seq}&limit=2`);
    expect(last.data.map((event) => event.seq)).toEqual([5]);
    expect(last.next_after_seq).toBeNull();
    expect((await page("after_seq=5")).data).toEqual([]);
  });
});
