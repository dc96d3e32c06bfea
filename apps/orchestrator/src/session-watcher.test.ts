import { type Bus, ensureConsumer, type ServiceHandle } from "@wakeloop/bus";
import { closeTestBus, openTestBus, until } from "@wakeloop/bus/testing";
import type { SandboxReleaseRequest, SessionEvent } from "@wakeloop/contracts";
import { acquireLease, append, type NewEvent, newId, readEvents } from "@wakeloop/db";
import { createSandboxClient } from "@wakeloop/sandbox-client";
import { serveReleaseStandIn } from "@wakeloop/sandbox-client/testing";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedEnvironment,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventsConsumers, watchSessions } from "./session-watcher";

// Against real Postgres and NATS, each test with its own database and subject prefix. The test plays
// the outbox relay: it appends events, then publishes them where the relay would, so it also chooses
// what arrives twice or late. Each check waits until every consumer has acked what was published.

let database: TestDatabase;
let bus: Bus;
let seeded: SeededAgent;
let stopping: AbortController;
let watching: Promise<void>;
let runner: ServiceHandle;
let releases: SandboxReleaseRequest[];
const log = createLogger({ service: "session-watcher-test", level: "silent" });

beforeEach(async () => {
  database = await createTestDatabase();
  bus = await openTestBus();
  seeded = await seedAgent(database.db);
  for (const consumer of eventsConsumers(bus)) await ensureConsumer(bus.jsm, consumer);
  // A sandbox-runner stand-in that releases whatever it is asked to.
  const standIn = serveReleaseStandIn(bus, async () => ({ released: true }));
  releases = standIn.requests;
  runner = standIn.handle;
  stopping = new AbortController();
  watching = watchSessions({
    db: database.appDb,
    bus,
    log,
    sandbox: createSandboxClient(bus, { releaseTimeoutMs: 2_000 }),
    concurrency: 4,
    maxWakesInFlight: 10,
    signal: stopping.signal,
  });
});

afterEach(async () => {
  stopping.abort();
  await watching;
  await runner.stop();
  await closeTestBus(bus);
  await database.drop();
});

/** Commits `events` to the session, as the gateway or a worker would. */
function commit(sessionId: string, events: NewEvent[]): Promise<SessionEvent[]> {
  return append(database.db, { tenantId: seeded.tenantId, sessionId, events });
}

/** Publishes committed events as the relay does; `msgId` apart, a second publish is a redelivery. */
async function deliver(events: SessionEvent[], msgId = (event: SessionEvent) => event.id): Promise<void> {
  for (const event of events)
    await bus.publish(bus.catalog.events, [seeded.tenantId, event.session_id, event.type], event, {
      msgId: msgId(event),
    });
  await until(async () => {
    for (const consumer of eventsConsumers(bus)) {
      const durable = consumer.consumer?.durable ?? "";
      const info = await bus.jsm.consumers.info(consumer.stream.name, durable);
      if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
    }
    return true;
  });
}

const wakes = (sessionId: string) =>
  database.db.selectFrom("wakes").selectAll().where("session_id", "=", sessionId).execute();

/** The msg ids of the jobs on the wake work queue. */
async function jobIds(): Promise<string[]> {
  const name = bus.catalog.wakes.stream.name;
  const { first_seq, last_seq, messages } = (await bus.jsm.streams.info(name)).state;
  const ids: string[] = [];
  for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) {
    const stored = await bus.jsm.streams.getMessage(name, { seq });
    ids.push(stored?.header.get("Nats-Msg-Id") ?? "");
  }
  return ids;
}

describe("watchSessions", () => {
  it("opens a wake for a user message and publishes its job", async () => {
    const session = await seedSession(database.db, seeded);
    await deliver(
      await commit(session.id, [{ type: "user.message", content: [{ type: "text", text: "hi" }] }]),
    );

    const [wake, ...more] = await wakes(session.id);
    expect(more).toEqual([]);
    expect(wake).toMatchObject({ status: "queued", reason: "user_message", attempt: 1 });
    expect(wake?.published_at).toBeInstanceOf(Date);
    expect(await jobIds()).toEqual([`${wake?.id}:1`]);
  });

  it("does nothing more for a repeated delivery, or a late one after the wake ran", async () => {
    const session = await seedSession(database.db, seeded);
    const message = await commit(session.id, [
      { type: "user.message", content: [{ type: "text", text: "hi" }] },
    ]);
    await deliver(message);
    const [wake] = await wakes(session.id);
    if (wake === undefined) throw new Error("no wake was opened");

    await deliver(message, (event) => `${event.id}:again`);
    expect(await wakes(session.id)).toHaveLength(1);
    expect(await jobIds()).toEqual([`${wake.id}:1`]);

    // A worker runs the wake: it reads the message and ends the turn.
    const lease = await acquireLease(database.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      wakeId: wake.id,
      workerId: "w",
      ttlMs: 30_000,
    });
    const epoch = lease?.epoch ?? 0;
    await append(database.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      events: [{ type: "session.status_running" }, { type: "span.model_request_start", model: "fake" }],
      fence: epoch,
    });
    await append(database.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      fence: epoch,
      finishWake: { wakeId: wake.id, epoch, status: "completed" },
    });
    await deliver(message, (event) => `${event.id}:late`);
    expect(await wakes(session.id)).toMatchObject([{ id: wake.id, status: "completed" }]);
    expect(await jobIds()).toEqual([`${wake.id}:1`]);
  });

  it("holds a wake past the tenant's limit and publishes it when one of the tenant's wakes ends", async () => {
    const hi = [{ type: "user.message", content: [{ type: "text", text: "hi" }] }] satisfies NewEvent[];
    const sessions = [];
    // The watcher's limit is 10 wakes in flight per tenant.
    for (let index = 0; index < 11; index++) sessions.push((await seedSession(database.db, seeded)).id);
    for (const sessionId of sessions) await deliver(await commit(sessionId, hi));
    const opened = await Promise.all(sessions.map(async (id) => (await wakes(id))[0]));
    const [first] = opened;
    const held = opened[10];
    if (first === undefined || held === undefined) throw new Error("every session has a wake");
    expect(held.published_at).toBeNull();
    expect(await jobIds()).toHaveLength(10);

    const lease = await acquireLease(database.db, {
      tenantId: seeded.tenantId,
      sessionId: first.session_id,
      wakeId: first.id,
      workerId: "w",
      ttlMs: 30_000,
    });
    const epoch = lease?.epoch ?? 0;
    await deliver(
      await append(database.db, {
        tenantId: seeded.tenantId,
        sessionId: first.session_id,
        events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
        fence: epoch,
        finishWake: { wakeId: first.id, epoch, status: "completed" },
      }),
    );
    expect((await wakes(held.session_id))[0]?.published_at).toBeInstanceOf(Date);
    expect(await jobIds()).toContain(`${held.id}:1`);
  });

  it("settles the calls of an idle session that the user interrupts", async () => {
    const session = await seedSession(database.db, seeded);
    const call = newId("event");
    await commit(session.id, [
      { id: call, type: "agent.tool_use", name: "deploy", input: {}, evaluated_permission: "ask" },
      { type: "session.status_idle", stop_reason: { type: "requires_action", event_ids: [call] } },
    ]);
    await deliver(await commit(session.id, [{ type: "user.interrupt" }]));

    const events = await readEvents(database.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      afterSeq: 3,
    });
    expect(events).toMatchObject([
      { type: "agent.tool_result", tool_use_id: call, is_error: true },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ]);
    expect(await wakes(session.id)).toEqual([]);
  });

  it("releases the sandbox of a terminated session that has an environment", async () => {
    const session = await seedSession(database.db, seeded, {
      environmentId: await seedEnvironment(database.db, seeded),
    });
    await deliver(await commit(session.id, [{ type: "session.status_terminated", reason: "archived" }]));

    expect(releases).toEqual([{ session_id: session.id, tenant_id: seeded.tenantId }]);
  });
});
