import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./database";

export interface CreateDbOptions {
  /** `postgres://user@host:port/database` */
  url: string;
  /** Pool size; pg's default (10) when omitted. */
  max?: number;
  /**
   * How long a new connection may take (default 10 s). pg waits forever by default, so with Postgres
   * unreachable but not refusing (a dropped route, a hung host) every request would hang instead of
   * failing as "unavailable, retry".
   */
  connectTimeoutMs?: number;
  /**
   * Told when an idle pooled connection breaks (Postgres restarted, backend terminated). The pool
   * has already discarded it and the next query reconnects; pass a logger to see these.
   */
  onIdleError?: (error: Error) => void;
}

const INT8_OID = 20;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * int8 (bigserial ids, lease epochs, counts) as a JS number. pg returns strings by default because
 * int8 can exceed 2^53; our int8 values never come close, and a value that did fails the query
 * instead of silently losing precision.
 */
function parseInt8(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) {
    throw new RangeError(`int8 value ${value} does not fit a JS number`);
  }
  return parsed;
}

const types: pg.CustomTypesConfig = {
  getTypeParser: (oid, format) =>
    oid === INT8_OID && format !== "binary" ? parseInt8 : pg.types.getTypeParser(oid, format),
};

// Each handle's pool, for `poolStats`: Kysely keeps its pool private.
const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/** How busy a handle's pool is; `waiting` counts queries queued for a connection. Zeros for a foreign handle. */
export function poolStats(db: Kysely<Database>): { total: number; idle: number; waiting: number } {
  const pool = pools.get(db);
  return pool
    ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
    : { total: 0, idle: 0, waiting: 0 };
}

export function createDb(options: CreateDbOptions): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    types,
  });
  // Without a listener, an idle connection's error is an uncaught 'error' event that kills the process.
  pool.on("error", options.onIdleError ?? (() => {}));
  // The pool listens only while a connection is idle. One checked out between two statements of a
  // transaction (every tenant-scoped transaction is) would crash the process the same way when
  // Postgres goes away; with this listener its next statement fails instead ("not queryable", a
  // connection failure the callers answer as retryable) and the pool discards it on release.
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}
