import { connectBus, streamNamePrefix } from "@wakeloop/bus";
import {
  cleanupPrefix,
  createTestDatabase,
  type LatencySummary,
  measureLatency,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { sql } from "kysely";

/*
 * The machine's floor, measured in the same run as the platform: one durable Postgres commit (a
 * transaction of two writes sent as one round trip), one JetStream publish until its ack, and the CPU
 * of parsing a JSON document the size of a model request. Every figure of the platform moves with the
 * machine (machines of this kind have run 4× apart on different days); set beside its floor, a run
 * can be read against one from another day.
 */

export interface MachineFloor {
  postgresCommitMs: LatencySummary;
  jetstreamAckMs: LatencySummary;
  /** Bytes of the parsed document. */
  jsonBytes: number;
  jsonParseMs: LatencySummary;
}

/** A document shaped like a request's tool definitions (~65 kB), the same bytes in every run. */
function requestSizedJson(): string {
  const tools = Array.from({ length: 270 }, (_, index) => ({
    name: `tool_${index}`,
    description: `Reads part ${index} of a file in the session's workspace and returns its text.`,
    input_schema: {
      type: "object",
      properties: { path: { type: "string" }, offset: { type: "integer", minimum: 0 } },
      required: ["path"],
    },
  }));
  return JSON.stringify({ model: "floor", stream: true, tools });
}

export async function runMachineFloor({ iterations = 500 } = {}): Promise<MachineFloor> {
  const database = await createTestDatabase({ max: 1 });
  let postgresCommitMs: LatencySummary;
  try {
    await sql`CREATE TABLE floor_probe (id integer PRIMARY KEY, n integer NOT NULL)`.execute(database.db);
    // No parameters, so one simple-protocol message: the whole transaction is one round trip. Each
    // commit inserts a row of its own (warm-up runs included).
    let row = 0;
    postgresCommitMs = await measureLatency(iterations, () => {
      row += 1;
      return sql
        .raw(
          `BEGIN; INSERT INTO floor_probe VALUES (${row}, 0); UPDATE floor_probe SET n = n + 1 WHERE id = ${row}; COMMIT`,
        )
        .execute(database.db);
    });
  } finally {
    await database.drop();
  }

  const prefix = testPrefix();
  const bus = await connectBus({ servers: testNatsUrl(), prefix, name: "machine-floor" });
  let jetstreamAckMs: LatencySummary;
  try {
    const subject = `${prefix}.floor`;
    await bus.jsm.streams.add({ name: `${streamNamePrefix(prefix)}_FLOOR`, subjects: [subject] });
    const payload = new TextEncoder().encode("x".repeat(512));
    jetstreamAckMs = await measureLatency(iterations, () => bus.js.publish(subject, payload));
  } finally {
    await cleanupPrefix(bus.jsm, prefix);
    await bus.close();
  }

  const json = requestSizedJson();
  const jsonParseMs = await measureLatency(iterations, async () => JSON.parse(json));
  return { postgresCommitMs, jetstreamAckMs, jsonBytes: json.length, jsonParseMs };
}
