import { type Span, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { Bus } from "@wakeloop/bus";
import {
  type StopReason,
  type TokenUsage,
  textContent,
  type WakeJob,
  WakeloopError,
} from "@wakeloop/contracts";
import { acquireLease, type Database, type NewEvent } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import { budgetExhausted, INTERRUPTED_BEFORE_RUN, unrunCallIds } from "@wakeloop/session-core";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
  GenAiOperation,
  type Logger,
} from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import { buildModelRequest } from "../context/build-request";
import { callModel } from "../model/call-model";
import type { ModelClients } from "../model/model-clients";
import { executeCalls, planModelCalls, resumeCalls, type ToolContext } from "../tools/tool-batch";
import { ensureSandbox } from "./ensure-sandbox";
import { keepLease } from "./lease-keeper";
import { loadSession } from "./load-session";
import type { SessionView } from "./session-view";
import type { WakeSettings } from "./wake-settings";
import { WakeWriter } from "./wake-writer";

export interface WakeDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  tracer: Tracer;
  models: ModelClients;
  sandbox: SandboxClient | null;
  settings: WakeSettings;
}

/**
 * One wake (DESIGN §3): take the lease, run model requests and tool batches until the turn ends, the
 * session needs a person or client, the budget is spent or retries run out. Every write is fenced by the
 * lease epoch; losing the lease ends the wake without another write.
 */
export function runWake(deps: WakeDeps, job: WakeJob, working: () => void): Promise<void> {
  const log = deps.log.child({ session_id: job.session_id, wake_id: job.wake_id });
  return deps.tracer.startActiveSpan("invoke_agent", async (span) => {
    span.setAttributes({
      [ATTR_GEN_AI_OPERATION_NAME]: GenAiOperation.invokeAgent,
      [ATTR_GEN_AI_CONVERSATION_ID]: job.session_id,
      [ATTR_WAKELOOP_TENANT_ID]: job.tenant_id,
      [ATTR_WAKELOOP_WAKE_ID]: job.wake_id,
    });
    try {
      await leasedWake(deps, job, working, log, span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

async function leasedWake(
  deps: WakeDeps,
  job: WakeJob,
  working: () => void,
  log: Logger,
  span: Span,
): Promise<void> {
  const { db, settings } = deps;
  const traceId = span.spanContext().traceId;
  // The lease and `session.status_running` commit together: one transaction before the first model call.
  const lease = await acquireLease(db, {
    tenantId: job.tenant_id,
    sessionId: job.session_id,
    wakeId: job.wake_id,
    workerId: settings.workerId,
    ttlMs: settings.leaseTtlMs,
    events: [{ type: "session.status_running", trace_id: traceId }],
  });
  if (lease === null) {
    span.setAttribute("wakeloop.wake.duplicate_job", true);
    log.debug("wake already taken or finished; dropping the duplicate job");
    return;
  }
  const keeper = keepLease({
    db,
    log,
    tenantId: job.tenant_id,
    wakeId: job.wake_id,
    epoch: lease.epoch,
    ttlMs: settings.leaseTtlMs,
    working,
  });
  const interrupt = new AbortController();
  const control = deps.bus.subscribeControl(job.session_id, (message) => {
    if (message.type === "interrupt") interrupt.abort(new Error("interrupted"));
  });
  try {
    const view = await loadSession(db, lease.session);
    span.updateName(`invoke_agent ${view.agent.name}`);
    span.setAttribute(ATTR_GEN_AI_AGENT_NAME, view.agent.name);
    const writer = new WakeWriter(db, view, { id: job.wake_id, epoch: lease.epoch, traceId });
    const wake = new Wake(deps, view, writer, log, {
      interrupt: interrupt.signal,
      lost: keeper.lost,
      stop: AbortSignal.any([interrupt.signal, keeper.lost]),
    });
    try {
      await wake.run();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      await wake.fail(error);
    }
  } finally {
    control.unsubscribe();
    keeper.stop();
  }
}

interface WakeSignals {
  interrupt: AbortSignal;
  lost: AbortSignal;
  /** Either of the two: what running work listens to. */
  stop: AbortSignal;
}

class Wake {
  private modelRequests = 0;

  constructor(
    private readonly deps: WakeDeps,
    private readonly view: SessionView,
    private readonly writer: WakeWriter,
    private readonly log: Logger,
    private readonly signals: WakeSignals,
  ) {}

  private get tools(): ToolContext {
    return {
      db: this.deps.db,
      sandbox: this.deps.sandbox,
      tracer: this.deps.tracer,
      view: this.view,
      writer: this.writer,
      settings: this.deps.settings,
      signal: this.signals.stop,
    };
  }

  async run(): Promise<void> {
    if (this.interrupted()) return this.endForInterrupt();
    // The key and endpoint are settled once per wake (a database read for a tenant's own key), while
    // the sandbox and resumed calls are seen to, and before any request's start, so each request
    // follows its start at once; a refusal is raised after the start, which consumes the queued
    // messages it answers. A credential changed mid-wake counts from the next wake.
    const settled = this.deps.models(this.view.tenantId, this.view.agent.model).then(
      (resolved) => ({ resolved }),
      (refusal: unknown) => ({ refusal }),
    );
    await ensureSandbox(this.deps, this.view, this.writer, this.log);
    // Calls a previous wake left without a result: answered confirmations, crashed executions.
    const resumed = await resumeCalls(this.tools);
    this.writer.buffer(resumed);
    if (this.interrupted()) return this.endForInterrupt(new Set(resumed.settled?.map((call) => call.id)));

    const client = await settled;
    for (;;) {
      if (budgetExhausted(this.view.state)) return this.idle({ type: "budget_reached" });
      if (this.modelRequests >= this.deps.settings.maxModelRequestsPerWake) {
        this.log.warn("model request limit of one wake reached; yielding");
        return this.idle({ type: "end_turn" });
      }
      this.modelRequests += 1;
      // Commits the results buffered since the last request together with the request's start; the
      // request is then built from a view that holds them and every message committed before it.
      const [start] = await this.writer.write({
        events: [{ type: "span.model_request_start", model: this.view.agent.model.id }],
      });
      const { request, effective } = buildModelRequest(this.view, this.deps.settings);
      let response: Awaited<ReturnType<typeof callModel>>;
      try {
        // A refused endpoint or a missing key ends the turn with a session.error, like a failed call.
        if ("refusal" in client) throw client.refusal;
        response = await callModel(this.deps.tracer, client.resolved, request, {
          signal: this.signals.stop,
          retry: this.deps.settings.retry,
          hooks: {
            onRetry: async (error, attempt, delayMs) => {
              await this.writer.write({
                events: [
                  {
                    type: "session.error",
                    error: {
                      type: sessionErrorType(error.code),
                      message: error.message,
                      retry_status: {
                        type: "retrying",
                        attempt,
                        next_retry_at: new Date(Date.now() + delayMs).toISOString(),
                      },
                    },
                  },
                ],
              });
            },
          },
        });
      } catch (error) {
        const failure =
          error instanceof WakeloopError ? error : new WakeloopError("model_request_failed", String(error));
        this.assertLease();
        const end: NewEvent = {
          type: "span.model_request_end",
          model_request_start_id: start?.id ?? "",
          model_usage: ZERO,
          is_error: true,
        };
        if (this.interrupted()) {
          this.writer.buffer({ events: [end] });
          return this.endForInterrupt();
        }
        return this.idle(failure.retryable ? { type: "retries_exhausted" } : { type: "end_turn" }, [
          end,
          {
            type: "session.error",
            error: {
              type: sessionErrorType(failure.code),
              message: failure.message,
              retry_status: { type: failure.retryable ? "exhausted" : "terminal" },
            },
          },
        ]);
      }

      const usage = addUsage(this.view.state.usage, response.usage);
      const strictTools = new Set(request.tools.filter((tool) => tool.strict).map((tool) => tool.name));
      const plan = planModelCalls(this.tools, effective, response.toolCalls, strictTools);
      const events: NewEvent[] = [];
      if (response.text.length > 0)
        events.push({ type: "agent.message", content: textContent(response.text) });
      events.push(
        ...plan.announce,
        {
          type: "span.model_request_end",
          model_request_start_id: start?.id ?? "",
          model_usage: response.usage,
          is_error: false,
        },
        { type: "session.usage", usage, budget: this.view.state.budget },
        ...plan.rejected,
      );
      await this.writer.write({
        events,
        planned: plan.planned,
        ...(plan.batch.calls.length > 0 && { batchPlan: plan.batch }),
      });
      if (plan.stop) {
        return this.idle({ type: "end_turn" }, [
          {
            type: "session.error",
            error: { type: "loop_detected", message: plan.stop, retry_status: { type: "terminal" } },
          },
        ]);
      }

      this.writer.buffer(await executeCalls(this.tools, plan));
      if (this.interrupted()) return this.endForInterrupt();
      if (plan.pendingIds.length > 0)
        return this.idle({ type: "requires_action", event_ids: plan.pendingIds });
      if (response.toolCalls.length === 0 && this.view.state.unprocessed_message_ids.length === 0) {
        return this.idle({ type: "end_turn" });
      }
    }
  }

  /**
   * Ends the turn as the user asked: every call that has not run (pending, answered but not run, or
   * stopped by the interrupt) gets its error result, except those `resolved` by results buffered in
   * this wake, and the session goes idle.
   */
  private async endForInterrupt(resolved: ReadonlySet<string> = new Set()): Promise<void> {
    const events: NewEvent[] = unrunCallIds(this.view.state)
      .filter((id) => !resolved.has(id))
      .map((id) => ({
        type: "agent.tool_result",
        tool_use_id: id,
        content: textContent(INTERRUPTED_BEFORE_RUN),
        is_error: true,
      }));
    await this.idle({ type: "end_turn" }, events);
  }

  private async idle(stopReason: StopReason, before: NewEvent[] = []): Promise<void> {
    this.assertLease();
    await this.writer.write({
      events: [...before, { type: "session.status_idle", stop_reason: stopReason }],
      finish: "completed",
    });
  }

  /** An unexpected failure: say so on the session, end the turn, close the wake as failed. */
  async fail(error: unknown): Promise<void> {
    if (this.signals.lost.aborted || (error instanceof WakeloopError && error.code === "stale_fence")) {
      this.log.warn({ err: error }, "wake ended: lease lost");
      return;
    }
    this.log.error({ err: error }, "wake failed");
    try {
      await this.writer.write({
        events: [
          {
            type: "session.error",
            error: {
              type: "internal_error",
              message: error instanceof WakeloopError ? error.message : "the wake failed unexpectedly",
              retry_status: { type: "terminal" },
            },
          },
          { type: "session.status_idle", stop_reason: { type: "end_turn" } },
        ],
        finish: "failed",
      });
    } catch (writeError) {
      this.log.error(
        { err: writeError },
        "could not record the failure; the lease sweeper will recover the wake",
      );
    }
  }

  /** An interrupt, or the session ended under the wake (archived): either way the turn stops now. */
  private interrupted(): boolean {
    return (
      this.signals.interrupt.aborted ||
      this.view.state.interrupt_requested ||
      this.view.state.status === "terminated"
    );
  }

  private assertLease(): void {
    if (this.signals.lost.aborted) throw new WakeloopError("stale_fence", "the lease was lost");
  }
}

const ZERO: TokenUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    input_tokens: total.input_tokens + more.input_tokens,
    output_tokens: total.output_tokens + more.output_tokens,
    cache_creation_input_tokens: total.cache_creation_input_tokens + more.cache_creation_input_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens + more.cache_read_input_tokens,
  };
}

function sessionErrorType(code: string) {
  switch (code) {
    case "model_overloaded":
    case "model_rate_limited":
    case "model_invalid_request":
    case "model_request_failed":
      return code;
    // The endpoint rules or the key refused the request: only a change of the agent or settings helps.
    case "model_egress_refused":
    case "model_base_url_refused":
    case "egress_refused":
    case "model_credentials_missing":
    case "provider_credential_unreadable":
      return "model_invalid_request";
    default:
      return "model_request_failed" as const;
  }
}
