import type { Migration } from "kysely";
import * as m0001 from "./0001-tenancy";
import * as m0002 from "./0002-agents-environments";
import * as m0003 from "./0003-sessions-events-outbox";
import * as m0004 from "./0004-wakes-tool-calls";
import * as m0005 from "./0005-spans";
import * as m0006 from "./0006-agent-state-idempotency";
import * as m0007 from "./0007-tool-batches";
import * as m0008 from "./0008-provider-credentials";
import * as m0009 from "./0009-row-level-security";
import * as m0010 from "./0010-wake-dispatch";
import * as m0011 from "./0011-one-round-trip-append";
import * as m0012 from "./0012-memory";
import * as m0013 from "./0013-schedules";
import * as m0014 from "./0014-session-navigation";
import * as m0015 from "./0015-sub-sessions";
import * as m0016 from "./0016-agent-sql";
import * as m0017 from "./0017-retrieval";
import * as m0019 from "./0019-outcomes";
import * as m0020 from "./0020-agent-code";
import * as m0021 from "./0021-session-model";
import * as m0022 from "./0022-substrate-resources";
import * as m0023 from "./0023-mcp-vault";
import * as m0024 from "./0024-wake-memory-context";
import * as m0025 from "./0025-retrieval-ranking";
import * as m0026 from "./0026-skill-embeddings";
import * as m0027 from "./0027-child-runs";
import * as m0028 from "./0028-batched-event-index";
import * as m0029 from "./0029-embedding-models";
import * as m0030 from "./0030-one-call-step-and-wake-start";
import * as m0031 from "./0031-agent-sql-reaped-on-archive";
import * as m0032 from "./0032-event-pipeline-cpu";
import * as m0033 from "./0033-step-write-cpu";
import * as m0034 from "./0034-held-wake-check";
import * as m0035 from "./0035-append-opens-wake";
import * as m0036 from "./0036-one-outbox-row-per-commit";
import * as m0037 from "./0037-session-lock-no-key";
import * as m0038 from "./0038-agent-sql-own-database";

/**
 * Every migration, in order. Static imports instead of scanning a folder, so migrations run the same
 * from source, tests and bundles. Migrations are append-only: never edit one that has shipped.
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  "0001-tenancy": m0001,
  "0002-agents-environments": m0002,
  "0003-sessions-events-outbox": m0003,
  "0004-wakes-tool-calls": m0004,
  "0005-spans": m0005,
  "0006-agent-state-idempotency": m0006,
  "0007-tool-batches": m0007,
  "0008-provider-credentials": m0008,
  "0009-row-level-security": m0009,
  "0010-wake-dispatch": m0010,
  "0011-one-round-trip-append": m0011,
  "0012-memory": m0012,
  "0013-schedules": m0013,
  "0014-session-navigation": m0014,
  "0015-sub-sessions": m0015,
  "0016-agent-sql": m0016,
  "0017-retrieval": m0017,
  "0019-outcomes": m0019,
  "0020-agent-code": m0020,
  "0021-session-model": m0021,
  "0022-substrate-resources": m0022,
  "0023-mcp-vault": m0023,
  "0024-wake-memory-context": m0024,
  "0025-retrieval-ranking": m0025,
  "0026-skill-embeddings": m0026,
  "0027-child-runs": m0027,
  "0028-batched-event-index": m0028,
  "0029-embedding-models": m0029,
  "0030-one-call-step-and-wake-start": m0030,
  "0031-agent-sql-reaped-on-archive": m0031,
  "0032-event-pipeline-cpu": m0032,
  "0033-step-write-cpu": m0033,
  "0034-held-wake-check": m0034,
  "0035-append-opens-wake": m0035,
  "0036-one-outbox-row-per-commit": m0036,
  "0037-session-lock-no-key": m0037,
  "0038-agent-sql-own-database": m0038,
};
