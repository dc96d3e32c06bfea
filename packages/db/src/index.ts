export {
  type AgentCodeAuthor,
  type AgentCodeContent,
  type AgentCodeItem,
  createAgentCode,
  deleteAgentCode,
  listAgentCode,
  listAgentTools,
  readAgentCode,
  readAgentCodeVersion,
  setAgentToolEnabled,
  updateAgentCode,
} from "./agent-code";
export {
  type AgentSchemaTable,
  type AgentSqlLimits,
  type AgentSqlPool,
  type AgentSqlResult,
  agentSqlDatabaseUrl,
  agentSqlRunnerUrl,
  createAgentSqlPool,
  describeAgentSchema,
  dropAgentSqlSchema,
  runAgentSql,
} from "./agent-sql";
export {
  type AgentScope,
  deleteAgentState,
  getAgentState,
  listAgentStateKeys,
  setAgentState,
} from "./agent-state";
export {
  type AgentRevision,
  type AgentVersionRecord,
  type LatestAgentVersion,
  readAgentVersion,
  repinSessions,
  reviseAgent,
} from "./agent-versions";
export {
  type AgentSqlRolesOptions,
  type AppRoleOptions,
  agentSqlRunnerRole,
  ensureAgentSqlRoles,
  ensureAppRole,
  roleBypassesRowSecurity,
} from "./app-role";
export { CONTINUE_MESSAGE, childRunLeft, finishChildRun, startChildRuns } from "./child-runs";
export { type CreateDbOptions, createDb, poolStats } from "./create-db";
export type * from "./database";
export { copyDatabase, dropDatabase, dropRole, ensureDatabase, redactUrl } from "./database-admin";
export {
  type EventHit,
  type EventSearchOptions,
  indexableText,
  indexCommittedEvents,
  indexedEventsById,
  indexSessionEvents,
  MAX_INDEXED_CHARS,
  type SpanHit,
  searchSessionEvents,
  searchSpans,
  type TenantEvent,
} from "./event-index";
export { eventFromRow, type SessionRow, sessionFromRow } from "./event-rows";
export {
  type AgentStateWrite,
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
export { needsSettling, settleIdleInterrupt } from "./idle-interrupt";
export { newId } from "./ids";
export { readEventPayload, readJson, readSessionState } from "./json-readers";
export {
  type AcquiredLease,
  type AcquireLeaseInput,
  acquireLease,
  type HeldLease,
  renewLeases,
  type StartedWake,
  type StartWakeInput,
  startWake,
} from "./lease";
export {
  contentHash,
  listMemoryEntries,
  listMemoryStores,
  listMemoryVersions,
  lockMemoryStore,
  type MemoryEntry,
  type MemoryEntrySummary,
  type MemoryHit,
  type MemoryLimits,
  type MemoryScope,
  type MemorySearchOptions,
  type MemoryStoreSummary,
  type MemoryWrite,
  memoryContext,
  memoryEntriesByKey,
  readMemoryEntry,
  readMemoryVersion,
  recordedMemoryCall,
  recordMemoryCall,
  searchMemory,
  writeMemory,
} from "./memory-store";
export { migrateAgentSqlDatabase, migrateToLatest } from "./migrator";
export {
  activeOutcome,
  type CriterionResult,
  defineOutcome,
  type NewOutcome,
  type NewOutcomeEvaluation,
  type Outcome,
  type OutcomeEvaluation,
  outcomeEvaluations,
  recordOutcomeEvaluation,
  type SessionScope,
} from "./outcomes";
export { isConnectionFailure, isInsufficientPrivilege, isUniqueViolation } from "./pg-errors";
export {
  claimEmbeddingWork,
  configureEmbeddings,
  type EmbeddingKind,
  type EmbeddingWork,
  embeddingBacklog,
  readVectors,
  readVectorWindow,
  type StoredVector,
  storeEmbeddings,
  type VectorKey,
  type VectorStamp,
  type VectorWindowOptions,
} from "./retrieval-embeddings";
export { type RankingFacts, readRankingFacts, type SessionRankingFacts } from "./retrieval-facts";
export {
  type FireDueInput,
  type Firing,
  fireDueSchedules,
  tenantsWithDueSchedules,
} from "./schedule-firing";
export {
  type AgentScheduleScope,
  cancelReminder,
  cancelScheduledTask,
  createReminder,
  createScheduledTask,
  getScheduledTask,
  listScheduledTasks,
  type NewReminder,
  type NewScheduledTask,
  type ScheduleRow,
  scheduledTaskView,
  scheduleSpecOf,
  setScheduledTaskEnabled,
} from "./schedules";
export {
  findAgentSession,
  type ListAgentSessionsInput,
  listAgentSessions,
  listSessionWakes,
  type NavigatedSession,
  type SessionLineage,
  type SessionWake,
  sessionHistoryChars,
} from "./session-navigation";
export {
  type CreateSessionInput,
  createSession,
  createSessions,
  getSession,
  type ReadEventsInput,
  readEvents,
} from "./session-queries";
export {
  answerWaits,
  appendToChild,
  type ChildOutcome,
  cascadeToChildren,
  completeChildSession,
  idleDescendants,
  type SpawnChildInput,
  spawnChildSession,
  surfaceChildApprovals,
} from "./sub-sessions";
export {
  listSubstrateFiles,
  listSubstrateVersions,
  readSubstrateFile,
  readSubstrateVersion,
  restoreSubstrateVersion,
  type SubstrateLimits,
  type SubstrateRestore,
  type SubstrateWrite,
  type SubstrateWriteResult,
  substrateContents,
  writeSubstrateFile,
} from "./substrate-store";
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
  type ScheduledWake,
  type ScheduleWakeInput,
  scheduleWake,
  sessionAwaitingWake,
  staleQueuedWakes,
} from "./wakes";
