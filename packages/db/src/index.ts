export {
  type AgentScope,
  deleteAgentState,
  getAgentState,
  listAgentStateKeys,
  setAgentState,
} from "./agent-state";
export { type AppRoleOptions, ensureAppRole, roleBypassesRowSecurity } from "./app-role";
export { type CreateDbOptions, createDb, poolStats } from "./create-db";
export type * from "./database";
export { dropDatabase, dropRole, ensureDatabase, redactUrl } from "./database-admin";
export { eventFromRow, type SessionRow, sessionFromRow } from "./event-rows";
export {
  type Appended,
  type AppendInput,
  append,
  appendAt,
  type NewEvent,
  type SessionHead,
  type ToolCallRecord,
  type ToolCallUpdate,
  type ToolCallWrites,
  type TraceHeaders,
} from "./event-store";
export { expireIdempotencyKeys } from "./idempotency-keys";
export { settleIdleInterrupt } from "./idle-interrupt";
export { newId } from "./ids";
export { readEventPayload, readJson, readSessionState } from "./json-readers";
export {
  type AcquiredLease,
  type AcquireLeaseInput,
  acquireLease,
  type HeldLease,
  renewLeases,
} from "./lease";
export { migrateToLatest } from "./migrator";
export { isConnectionFailure, isInsufficientPrivilege, isUniqueViolation } from "./pg-errors";
export {
  type CreateSessionInput,
  createSession,
  getSession,
  type ReadEventsInput,
  readEvents,
} from "./session-queries";
export { scopeTransaction, withTenant } from "./tenant-scope";
export { markToolCallRunning, startedToolCalls } from "./tool-calls";
export { type ClaimWakesInput, claimWakesToPublish, tenantsWithHeldWakes } from "./wake-dispatch";
export {
  type ExpiredLease,
  exhaustExpiredWake,
  expiredLeases,
  type RequeueWakeInput,
  requeueWake,
  rescheduleExpiredWake,
} from "./wake-recovery";
export {
  type OpenWakeInput,
  openWake,
  type QueuedWakeJob,
  type ScheduleWakeInput,
  scheduleWake,
  staleQueuedWakes,
} from "./wakes";
