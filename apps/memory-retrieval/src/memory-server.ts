import { SpanStatusCode } from "@opentelemetry/api";
import type { Bus } from "@wakeloop/bus";
import {
  type CaptureLearningRequest,
  type CaptureLearningResponse,
  LEARNINGS_STORE,
  type MemoryExecuteRequest,
  type MemoryExecuteResponse,
  type MemoryToolName,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  type Database,
  type MemoryLimits,
  readMemoryEntry,
  recordedMemoryCall,
  recordMemoryCall,
  withTenant,
  writeMemory,
} from "@wakeloop/db";
import { memoryService } from "@wakeloop/memory-client";
import {
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_WAKELOOP_SESSION_ID,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
  type Logger,
  type Tracer,
} from "@wakeloop/telemetry";
import { memoryTools } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { runMemoryTool } from "./memory-tools";
import { recallMemory } from "./recall";
import { wakeContext } from "./skill-tools";
import { FULL_TEXT_ONLY, type SearchSettings } from "./tool-call";

export interface MemoryServerOptions {
  bus: Bus;
  db: Kysely<Database>;
  tracer: Tracer;
  log: Logger;
  limits: MemoryLimits;
  /** Default: full-text search only. */
  search?: SearchSettings;
  replicaId: string;
}

/** Tools whose effect is recorded by tool call id, in the transaction of the write. */
const WRITE_TOOLS = new Set(memoryTools.filter((tool) => !tool.readOnly).map((tool) => tool.name));

/** Errors the model can act on (a stale version, a limit, bad input): an `is_error` result, not a failure. */
function isToolError(error: unknown): error is WakeloopError {
  return error instanceof WakeloopError && error.code.startsWith("memory_");
}

function resultOf(toolCallId: string, result: Record<string, unknown>): MemoryExecuteResponse {
  return {
    tool_call_id: toolCallId,
    is_error: false,
    content: [{ type: "text", text: JSON.stringify(result) }],
    result,
    replayed: false,
  };
}

/**
 * Executes one memory tool call. A write runs in one transaction with its idempotency record: a retry
 * of the same tool call id (after a lost reply or a replica killed mid-call) replays the recorded
 * result, and a write whose transaction did not commit left nothing behind to replay or undo.
 */
export async function executeMemoryCall(
  db: Kysely<Database>,
  limits: MemoryLimits,
  request: MemoryExecuteRequest & { tool: MemoryToolName },
  search: SearchSettings = FULL_TEXT_ONLY,
): Promise<MemoryExecuteResponse> {
  const scope = { tenantId: request.tenant_id, agentId: request.agent_id };
  const call = {
    scope,
    sessionId: request.session_id,
    input: request.input,
    limits,
    search,
    author: {
      kind: "tool" as const,
      session_id: request.session_id,
      wake_id: request.wake_id,
      tool_call_id: request.tool_call_id,
    },
  };
  try {
    if (!WRITE_TOOLS.has(request.tool)) {
      return resultOf(request.tool_call_id, await runMemoryTool({ ...call, db }, request.tool));
    }
    return await withTenant(db, request.tenant_id, async (trx) => {
      const recorded = await recordedMemoryCall(trx, request.tenant_id, request.tool_call_id);
      if (recorded !== undefined) return { ...(recorded as MemoryExecuteResponse), replayed: true };
      const response = resultOf(
        request.tool_call_id,
        await runMemoryTool({ ...call, db: trx }, request.tool),
      );
      await recordMemoryCall(trx, request.tenant_id, {
        toolCallId: request.tool_call_id,
        tool: request.tool,
        result: response,
      });
      return response;
    });
  } catch (error) {
    if (!isToolError(error)) throw error;
    return {
      tool_call_id: request.tool_call_id,
      is_error: true,
      content: [{ type: "text", text: `${error.code}: ${error.message}` }],
      result: { error: { code: error.code, message: error.message, details: error.details ?? null } },
      replayed: false,
    };
  }
}

/** Records a learning once per key; capturing it again (a retried wake) returns the existing version. */
export async function captureLearning(
  db: Kysely<Database>,
  limits: MemoryLimits,
  request: CaptureLearningRequest,
): Promise<CaptureLearningResponse> {
  const scope = { tenantId: request.tenant_id, agentId: request.agent_id };
  try {
    const version = await writeMemory(
      db,
      scope,
      {
        store: LEARNINGS_STORE,
        target: request.key,
        content: request.text,
        metadata: { session_id: request.session_id, wake_id: request.wake_id },
        expectedVersionId: null,
        author: {
          kind: "harness",
          session_id: request.session_id,
          wake_id: request.wake_id,
          tool_call_id: null,
        },
      },
      limits,
    );
    return { version_id: version.id, captured: true };
  } catch (error) {
    if (!(error instanceof WakeloopError && error.code === "memory_version_conflict")) throw error;
    const entry = await readMemoryEntry(db, scope, LEARNINGS_STORE, request.key);
    if (entry === null) throw error;
    return { version_id: entry.version_id, captured: false };
  }
}

/** Serves the `memory` service in its queue group; every replica is the same and shares only Postgres. */
export function startMemoryServer(options: MemoryServerOptions) {
  const { bus, db, tracer, log, limits } = options;
  const handle = bus.serve(memoryService, {
    execute: (request) =>
      tracer.startActiveSpan(`memory ${request.tool}`, async (span) => {
        span.setAttributes({
          [ATTR_GEN_AI_TOOL_NAME]: request.tool,
          [ATTR_GEN_AI_TOOL_CALL_ID]: request.tool_call_id,
          [ATTR_WAKELOOP_TENANT_ID]: request.tenant_id,
          [ATTR_WAKELOOP_SESSION_ID]: request.session_id,
          [ATTR_WAKELOOP_WAKE_ID]: request.wake_id,
        });
        try {
          const response = await executeMemoryCall(db, limits, request, options.search);
          span.setAttribute("wakeloop.memory.replayed", response.replayed);
          if (response.is_error) span.setStatus({ code: SpanStatusCode.ERROR });
          return response;
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
          log.error(
            { err: error, toolCallId: request.tool_call_id, tool: request.tool },
            "memory call failed",
          );
          throw error;
        } finally {
          span.end();
        }
      }),
    context: (request) => wakeContext(db, { tenantId: request.tenant_id, agentId: request.agent_id }),
    recall: (request) =>
      tracer.startActiveSpan("memory recall", async (span) => {
        span.setAttribute(ATTR_WAKELOOP_TENANT_ID, request.tenant_id);
        try {
          const response = await recallMemory(db, request, options.search ?? FULL_TEXT_ONLY);
          span.setAttribute("wakeloop.memory.recalled", response.hits.length);
          return response;
        } finally {
          span.end();
        }
      }),
    capture_learning: (request) => captureLearning(db, limits, request),
    ping: async () => ({ ready: true as const, replica_id: options.replicaId }),
  });
  log.info({ replicaId: options.replicaId }, "memory service started");
  return { stop: () => handle.stop() };
}
