import { setTimeout as sleep } from "node:timers/promises";
import type { Bus } from "@wakeloop/bus";
import {
  type CaptureLearningRequest,
  type CaptureLearningResponse,
  type MemoryContextResponse,
  type MemoryExecuteRequest,
  type MemoryExecuteResponse,
  type MemoryRecallRequest,
  type MemoryRecallResponse,
  WakeloopError,
} from "@wakeloop/contracts";
import { memoryService } from "./memory-service";

export interface MemoryClientOptions {
  /** A write is one short transaction; past this the replica is hung or gone and the call is retried. */
  timeoutMs?: number;
  /**
   * How long `execute` keeps sending a call again while no replica answers (none listening, or the one
   * that took it died): the service keys writes by tool call id, so a resend never writes twice.
   */
  retryForMs?: number;
  /** How long a readiness answer (either way) is trusted before the service is asked again. */
  readinessTtlMs?: number;
  /** A ping unanswered by then means no replica is ready. */
  pingTimeoutMs?: number;
  now?: () => number;
}

export interface MemoryClient {
  /** True when a replica answered a recent ping: the `memory.ready` runtime fact. */
  ready(): Promise<boolean>;
  /** Runs one memory tool call (idempotent per tool_call_id), resent while no replica answers. */
  execute(request: MemoryExecuteRequest): Promise<MemoryExecuteResponse>;
  /** The skills index for the system context of a wake (waited for `contextTimeoutMs`, default the call timeout). */
  context(tenantId: string, agentId: string, contextTimeoutMs?: number): Promise<MemoryContextResponse>;
  /**
   * The top memory hits for a wake's new input, asked once with its own short timeout: recall is worth
   * less than a wake held up, so it is not resent.
   */
  recall(request: MemoryRecallRequest, timeoutMs: number): Promise<MemoryRecallResponse>;
  captureLearning(request: CaptureLearningRequest): Promise<CaptureLearningResponse>;
}

export function createMemoryClient(
  bus: Pick<Bus, "request">,
  options: MemoryClientOptions = {},
): MemoryClient {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const ttlMs = options.readinessTtlMs ?? 2_000;
  const pingTimeoutMs = options.pingTimeoutMs ?? 500;
  const now = options.now ?? Date.now;
  const retryForMs = options.retryForMs ?? 60_000;
  let known: { ready: boolean; at: number } | null = null;
  let pending: Promise<boolean> | null = null;

  const ping = async () => {
    const ready = await bus
      .request(memoryService, "ping", {}, { timeoutMs: pingTimeoutMs })
      .then(() => true)
      .catch(() => false);
    known = { ready, at: now() };
    return ready;
  };

  return {
    ready() {
      if (known !== null && now() - known.at < ttlMs) return Promise.resolve(known.ready);
      pending ??= ping().finally(() => {
        pending = null;
      });
      return pending;
    },
    async execute(request) {
      const deadline = now() + retryForMs;
      for (let attempt = 0; ; attempt++) {
        try {
          return await bus.request(memoryService, "execute", request, { timeoutMs });
        } catch (error) {
          const retryable = error instanceof WakeloopError && error.retryable;
          if (!retryable || now() >= deadline) throw error;
          await sleep(Math.min(2_000, 100 * 2 ** attempt));
        }
      }
    },
    context: (tenantId, agentId, contextTimeoutMs = timeoutMs) =>
      bus.request(
        memoryService,
        "context",
        { tenant_id: tenantId, agent_id: agentId },
        { timeoutMs: contextTimeoutMs },
      ),
    recall: (request, recallTimeoutMs) =>
      bus.request(memoryService, "recall", request, { timeoutMs: recallTimeoutMs }),
    captureLearning: (request) => bus.request(memoryService, "capture_learning", request, { timeoutMs }),
  };
}
