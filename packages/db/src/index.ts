export { type AppRoleOptions, ensureAppRole, roleBypassesRowSecurity } from "./app-role";
export { type CreateDbOptions, createDb, poolStats } from "./create-db";
export type * from "./database";
export { dropDatabase, dropRole, ensureDatabase, redactUrl } from "./database-admin";
export { eventFromRow, type SessionRow, sessionFromRow } from "./event-rows";
export { type AppendInput, append, appendInTx, type NewEvent, type TraceHeaders } from "./event-store";
export { newId } from "./ids";
export { readEventPayload, readJson, readSessionState } from "./json-readers";
export {
  type AcquireLeaseInput,
  acquireLease,
  type ExpiredLease,
  expiredLeases,
  type FinishWakeInput,
  finishWake,
  type HeldLease,
  type RequeueWakeInput,
  renewLeases,
  requeueWake,
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
export { type ClaimWakesInput, claimWakesToPublish, tenantsWithHeldWakes } from "./wake-dispatch";
export { type OpenWakeInput, openWake, type QueuedWakeJob, staleQueuedWakes } from "./wakes";
