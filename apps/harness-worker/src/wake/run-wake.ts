import { type Span, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { Bus } from "@wakeloop/bus";
import {
  addUsage,
  type SessionEvent,
  type SessionState,
  type StopReason,
  type TokenUsage,
  textContent,
  type WakeJob,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  type AgentSqlPool,
  type AgentStateWrite,
  childRunLeft,
  type Database,
  listAgentTools,
  type NewEvent,
  startWake,
  type ToolCallRecord,
  type ToolCallUpdate,
} from "@wakeloop/db";
import type { MemoryClient } from "@wakeloop/memory-client";
import type { ModelRequest } from "@wakeloop/model-providers";
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
import type { EffectiveToolSet } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { buildModelRequest, continueConversation, conversationOf } from "../context/build-request";
import { learningDirectives } from "../context/learning-directive";
import { callModel } from "../model/call-model";
import { deltaPublisher } from "../model/delta-publisher";
import type { ModelClients } from "../model/model-clients";
import type { HistoryCache } from "../session/history-cache";
import { HISTORY_PAGE, loadSession, sessionSpecs, startingHistory } from "../session/load-session";
import type { SessionView, WakeMemory } from "../session/session-view";
import { SessionWriter, type WriteInput } from "../session/session-writer";
import type { McpAccess, WakeMcpClients } from "../tools/mcp/mcp-clients";
import { evaluatorGates } from "../tools/outcome-tools";
import { type CallPlan, planModelCalls, strictToolNames } from "../tools/plan-calls";
import { type CallResults, executeCalls, resumeCalls, withToolUsage } from "../tools/run-calls";
import { writesWithAppend } from "../tools/state-tools";
import { reportsResult } from "../tools/sub-session-tools";
import { runsInDatabase, type ToolContext } from "../tools/tool-context";
import { resultEvent } from "../tools/tool-outcome";
import type { WebAccess } from "../tools/web-tools";
import { secondsSince, type WakeMetrics } from "../wake-metrics";
import type { WakeSettings } from "../wake-settings";
import { compactContext } from "./compact-context";
import { CostMeter } from "./cost-meter";
import { ensureSandbox, needsSandbox } from "./ensure-sandbox";
import { keepLease } from "./lease-keeper";
import { listingEvent, wakeMcpClients } from "./wake-mcp";
import { loadWakeMemory, recallForWake } from "./wake-memory";

export interface WakeDeps {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  tracer: Tracer;
  metrics: WakeMetrics;
  models: ModelClients;
  sandbox: SandboxClient | null;
  memory: MemoryClient | null;
  web: WebAccess;
  mcp: McpAccess;
  settings: WakeSettings;
  histories: HistoryCache;
  agentSql: AgentSqlPool;
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
  // The lease, the history after what this worker kept of the session and whether the agent has
  // tools of its own: one round trip.
  const knownSeq = deps.histories.heldOf(job.session_id);
  // The memory context is asked for while the lease is taken when the job names the agent.
  const earlyMemory =
    job.agent_id === undefined
      ? null
      : { agentId: job.agent_id, context: wakeMemory(deps, log, job, job.agent_id) };
  const lease = await startWake(db, {
    tenantId: job.tenant_id,
    sessionId: job.session_id,
    wakeId: job.wake_id,
    workerId: settings.workerId,
    ttlMs: settings.leaseTtlMs,
    knownSeq,
    pageSize: HISTORY_PAGE,
  });
  if (lease === null) {
    span.setAttribute("wakeloop.wake.duplicate_job", true);
    log.debug("wake already taken or finished; dropping the duplicate job");
    return;
  }
  const started = performance.now();
  deps.metrics.wakeStarted();
  // Until the wake ends a turn (or says why it could not), it counts as failed.
  let stopReason = "error";
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
  let mcp: WakeMcpClients | null = null;
  try {
    // The model key is settled once per wake (a database read for a tenant's own key) while the
    // history is read and the first request's start commits: the request waits for the later of the
    // two, not for one after the other. A refusal is raised after the start, which consumes the queued
    // messages it answers. A credential changed mid-wake counts from the next wake.
    const specs = sessionSpecs(lease);
    const client: Promise<ResolvedClient> = deps.models(job.tenant_id, specs.agent.model).then(
      (resolved) => ({ resolved }),
      (refusal: unknown) => ({ refusal }),
    );
    // The MCP servers' tools are listed while the history is read; the effective tools of every
    // request of this wake are computed from the listing committed with its start (invariant 6).
    mcp = wakeMcpClients(deps.mcp, {
      tenantId: job.tenant_id,
      sessionId: job.session_id,
      agentId: lease.session.agent_id,
      specs,
      sandbox: deps.sandbox,
      bus: deps.bus,
    });
    const listing = mcp?.list(interrupt.signal) ?? Promise.resolve(null);
    const held = deps.histories.take(job.session_id, lease.session.last_seq);
    const known = startingHistory(held.events, knownSeq, lease.events);
    const memory =
      earlyMemory?.agentId === lease.session.agent_id
        ? earlyMemory.context
        : wakeMemory(deps, log, job, lease.session.agent_id);
    // Read beside the history, off the critical chain, when the agent has any; fixed for the wake
    // (offered from the next one).
    const agentTools = lease.hasAgentTools
      ? listAgentTools(db, { tenantId: job.tenant_id, agentId: lease.session.agent_id })
      : [];
    const view = await loadSession(db, lease, specs, known);
    if (held.conversation !== null) continueConversation(view, held.conversation);
    view.agentTools = await agentTools;
    view.memory = await memory;
    const recalled = await recallForWake(deps.memory, deps.tracer, log, view, settings.recall);
    span.updateName(`invoke_agent ${view.agent.name}`);
    span.setAttribute(ATTR_GEN_AI_AGENT_NAME, view.agent.name);
    const writer = new SessionWriter(db, view, { id: job.wake_id, epoch: lease.epoch, traceId });
    // With nothing to do before the first request, `session.status_running` commits with that
    // request's start: one commit fewer per wake. A sandbox to provision or calls to resume first
    // take time, so then it commits at once and clients see the session running meanwhile.
    const starting: NewEvent[] = [{ type: "session.status_running" }];
    if (recalled !== null) starting.push(recalled);
    const listed = await listing;
    const listingChanged = listed === null ? null : listingEvent(listed, view.state.mcp_servers);
    // An interrupt during the listing leaves the last one in place; the next wake lists again.
    if (listingChanged !== null && !interrupt.signal.aborted) starting.push(listingChanged);
    if (needsSandbox(deps.sandbox, view) || view.unresolvedCalls().length > 0)
      await writer.write({ events: starting });
    else writer.buffer({ events: starting });
    const wake = new Wake(deps, view, writer, log, mcp, {
      interrupt: interrupt.signal,
      lost: keeper.lost,
      stop: AbortSignal.any([interrupt.signal, keeper.lost]),
    });
    try {
      await wake.run(client);
      stopReason = view.state.stop_reason?.type ?? view.state.status;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      stopReason = await wake.fail(error);
    }
    deps.histories.keep(job.session_id, view.events, conversationOf(view));
  } finally {
    control.unsubscribe();
    keeper.stop();
    await mcp?.close();
    deps.metrics.wakeFinished(stopReason, secondsSince(started));
  }
}

function wakeMemory(deps: WakeDeps, log: Logger, job: WakeJob, agentId: string): Promise<WakeMemory> {
  return loadWakeMemory(
    deps.memory,
    deps.tracer,
    log,
    { tenantId: job.tenant_id, agentId },
    deps.settings.recall.timeoutMs,
  );
}

interface WakeSignals {
  interrupt: AbortSignal;
  lost: AbortSignal;
  /** Either of the two: what running work listens to. */
  stop: AbortSignal;
}

/** How a step ends: the turn goes idle, or the next model request starts, in the step's last commit. */
type StepEnd = { events: NewEvent[]; finish?: "completed"; continues: boolean };

class Wake {
  private modelRequests = 0;
  private readonly costs: CostMeter;
  /** The model's learning directives of this wake, captured once its turn has ended. */
  private readonly learnings = new Map<string, string>();

  constructor(
    private readonly deps: WakeDeps,
    private readonly view: SessionView,
    private readonly writer: SessionWriter,
    private readonly log: Logger,
    private readonly mcp: WakeMcpClients | null,
    private readonly signals: WakeSignals,
  ) {
    this.costs = new CostMeter(deps.settings.prices, view.state.cost_micro_usd, deps.metrics);
  }

  private get tools(): ToolContext {
    return {
      db: this.deps.db,
      sandbox: this.deps.sandbox,
      memory: this.deps.memory,
      web: this.deps.web,
      mcp: this.mcp,
      tracer: this.deps.tracer,
      metrics: this.deps.metrics,
      costs: this.costs,
      view: this.view,
      writer: this.writer,
      settings: this.deps.settings,
      models: this.deps.models,
      agentSql: this.deps.agentSql,
      signal: this.signals.stop,
    };
  }

  /**
   * Records a durable learning from this wake's outcome or the model's directive (one per key: a
   * retried wake records nothing new); `learning_list` shows it and only `memory_promote_note` makes
   * it shared memory.
   */
  private async captureLearning(key: string, text: string): Promise<void> {
    if (this.deps.memory === null || !this.view.memory.ready) return;
    await this.deps.memory
      .captureLearning({
        tenant_id: this.view.tenantId,
        agent_id: this.view.agentId,
        session_id: this.view.sessionId,
        wake_id: this.writer.wakeId,
        key,
        text,
      })
      .catch((error: unknown) => this.log.warn({ err: error }, "learning not captured"));
  }

  async run(settled: Promise<ResolvedClient>): Promise<void> {
    if (this.interrupted()) return this.endForInterrupt();
    await ensureSandbox(this.deps.sandbox, this.view, this.writer, this.log);
    // Calls a previous wake left without a result: answered confirmations, crashed executions.
    const resumed = await resumeCalls(this.tools);
    this.writer.buffer(resumed);
    if (this.interrupted()) {
      await this.endForInterrupt(new Set(resumed.settle.map((call) => call.id)));
      return this.signalStops(resumed);
    }

    // Commits the resumed results with the first request's start (or the turn's end).
    let start = await this.commitEnd(
      this.nextRequest(withToolUsage(this.view.state, resumed), await this.runSpent()),
      { events: [] },
    );
    this.signalStops(resumed);
    const client = await settled;
    while (start !== null) start = await this.step(client, start);
    // After the turn's end commit: the replies stating them are durable first.
    for (const [key, text] of this.learnings) await this.captureLearning(key, text);
  }

  /**
   * One model request and what it asked for, from its committed start to the next start or the end of
   * the turn. Calls whose effects live in Postgres (inline tools) commit with the response, their
   * results and the next start: one commit per step, one statement when they are only `set_state`.
   * Calls with effects elsewhere (the sandbox) are announced and recorded `planned` first, and their
   * results commit with the next start (invariant 4).
   */
  private async step(client: ResolvedClient, start: SessionEvent): Promise<SessionEvent | null> {
    if (this.interrupted()) {
      // The interrupt arrived as the start committed: the request is closed without being sent.
      this.writer.buffer({ events: [requestEnd(start, ZERO, true)] });
      await this.endForInterrupt();
      return null;
    }
    let request: ModelRequest;
    let effective: EffectiveToolSet;
    let response: ModelResponse;
    try {
      // A refused endpoint or a missing key ends the turn with a session.error, like a failed call.
      if ("refusal" in client) throw client.refusal;
      const hooks = {
        onRetry: (error: WakeloopError, attempt: number, delayMs: number) =>
          this.retrying(error, attempt, delayMs),
      };
      // Past the agent's context threshold, the history is compacted first (its own commit).
      await compactContext({
        ...this.deps,
        view: this.view,
        writer: this.writer,
        client: client.resolved,
        costs: this.costs,
        signal: this.signals.stop,
        hooks,
      });
      ({ request, effective } = buildModelRequest(this.view, this.deps.settings));
      response = await callModel(this.deps.tracer, client.resolved, request, {
        signal: this.signals.stop,
        retry: this.deps.settings.retry,
        metrics: this.deps.metrics,
        hooks,
        onDelta: deltaPublisher(
          this.deps.bus,
          {
            tenantId: this.view.tenantId,
            sessionId: this.view.sessionId,
            wakeId: this.writer.wakeId,
            requestStartId: start.id,
          },
          this.log,
        ),
      });
    } catch (error) {
      await this.requestFailed(start, error);
      return null;
    }

    const usage = addUsage(this.view.state.usage, response.usage);
    const cost = this.costs.charge([
      { provider: client.resolved.provider, model: request.model, usage: response.usage },
    ]);
    const gates = await evaluatorGates(
      this.deps.db,
      { tenantId: this.view.tenantId, sessionId: this.view.sessionId },
      response.toolCalls.map((call) => call.name),
    );
    const plan = planModelCalls(
      this.view,
      effective,
      response.toolCalls,
      strictToolNames(request.tools),
      gates,
    );
    const runSpent = await this.runSpent();
    const events: NewEvent[] = [];
    if (response.text.length > 0) events.push({ type: "agent.message", content: textContent(response.text) });
    for (const learning of learningDirectives(response.text)) this.learnings.set(learning.key, learning.text);
    events.push(
      ...plan.announce,
      requestEnd(start, response.usage, false),
      { type: "session.usage", usage, budget: this.view.state.budget, cost },
      ...plan.rejected,
    );
    // A stored plan says which calls ran together and why others did not; a single call's plan is one
    // group of that call, which its own events already say.
    const batch = plan.batch.calls.length > 1 ? { batchPlan: plan.batch } : {};
    if (plan.stop) {
      const stop: NewEvent = {
        type: "session.error",
        error: { type: "loop_detected", message: plan.stop, retry_status: { type: "terminal" } },
      };
      await this.idle({ type: "end_turn" }, [...events, stop], { record: plan.planned, ...batch });
      await this.captureLearning(
        `loop:${this.writer.wakeId}`,
        `A wake was stopped by loop detection: ${plan.stop}`,
      );
      return null;
    }

    if (plan.groups.flat().some((call) => !runsInDatabase(call.tool))) {
      await this.writer.write({ events, record: plan.planned, ...batch });
      const results = await executeCalls(this.tools, plan);
      this.writer.buffer(results);
      if (this.interrupted()) {
        await this.endForInterrupt();
        this.signalStops(results);
        return null;
      }
      const next = await this.commitEnd(
        this.endOfStep(plan, response, withToolUsage(this.view.state, results), runSpent),
        { events: [] },
      );
      this.signalStops(results);
      return next;
    }

    // A step calling only `set_state` (or nothing) needs no transaction: its writes ride in the append,
    // one statement. Other inline calls run in the transaction the append commits in.
    const agentState: AgentStateWrite[] | undefined = plan.groups
      .flat()
      .every((call) => writesWithAppend(call.tool))
      ? []
      : undefined;
    let end: StepEnd | null = null;
    let stops: SessionEvent[] = [];
    const runStep = async (db: Kysely<Database>): Promise<WriteInput> => {
      const results = await executeCalls(
        { ...this.tools, db, inCommit: true, stepUsage: usage, ...(agentState && { agentState }) },
        plan,
      );
      stops = results.stops;
      end = this.interrupted()
        ? null
        : this.endOfStep(
            plan,
            response,
            withToolUsage({ ...this.view.state, usage, cost_micro_usd: cost.session_micro_usd }, results),
            runSpent,
          );
      return {
        events: [...events, ...results.events, ...(end?.events ?? [])],
        record: unsettled(plan.planned, results.settle),
        ...batch,
        ...(agentState && { agentState }),
        ...(end?.finish && { finish: end.finish }),
      };
    };
    const committed = agentState
      ? await this.writer.write(await runStep(this.deps.db))
      : await this.writer.writeWith(runStep);
    this.signalStops({ stops });
    const ended = end as StepEnd | null;
    if (ended === null) return this.endForInterrupt().then(() => null);
    return ended.continues ? startOf(committed) : null;
  }

  /** What follows a step: a pause for people or the client, the turn's end, or the next request. */
  private endOfStep(
    plan: CallPlan,
    response: ModelResponse,
    state: SessionState,
    runSpent: boolean,
  ): StepEnd {
    if (reportsResult(plan.groups)) {
      return {
        events: [{ type: "session.status_terminated", reason: "completed" }],
        finish: "completed",
        continues: false,
      };
    }
    if (plan.pendingIds.length > 0) return idleEnd({ type: "requires_action", event_ids: plan.pendingIds });
    if (response.toolCalls.length === 0 && state.unprocessed_message_ids.length === 0)
      return idleEnd({ type: "end_turn" });
    return this.nextRequest(state, runSpent);
  }

  /**
   * The next request's start, unless the budget is spent, the parent's run of this sub-session used
   * the requests it allows (the orchestrator then answers the parent), or the wake made its last request.
   */
  private nextRequest(state: SessionState, runSpent: boolean): StepEnd {
    if (budgetExhausted(state)) return idleEnd({ type: "budget_reached" });
    if (runSpent) {
      this.log.info("the parent's session_run_child run used its model requests; yielding");
      return idleEnd({ type: "end_turn" });
    }
    if (this.modelRequests >= this.deps.settings.maxModelRequestsPerWake) {
      this.log.warn("model request limit of one wake reached; yielding");
      return idleEnd({ type: "end_turn" });
    }
    this.modelRequests += 1;
    return {
      events: [{ type: "span.model_request_start", model: this.view.agent.model.id }],
      continues: true,
    };
  }

  /**
   * Tells the workers holding the sessions a committed step stopped (a killed sub-session) to stop now.
   * The stop is durable already, so a lost message only delays it to the end of that session's step.
   */
  private signalStops(results: Pick<CallResults, "stops">): void {
    for (const stop of results.stops) {
      try {
        this.deps.bus.publishControl({ type: "interrupt", session_id: stop.session_id, event_id: stop.id });
      } catch (error) {
        this.log.warn({ err: error, event_id: stop.id }, "could not publish the interrupt control message");
      }
    }
  }

  /**
   * Whether this sub-session made every model request its parent's open `session_run_child` run allows.
   * Read at each step: a run may begin while the sub-session is mid-wake.
   */
  private async runSpent(): Promise<boolean> {
    if (this.view.parentSessionId === null) return false;
    const { tenantId, sessionId } = this.view;
    const left = await childRunLeft(this.deps.db, { tenantId, sessionId });
    return left !== null && left <= 0;
  }

  /** Commits `before` (and what is buffered) with the step's end; the new request's start, if any. */
  private async commitEnd(end: StepEnd, before: WriteInput): Promise<SessionEvent | null> {
    if (!end.continues) this.assertLease();
    const committed = await this.writer.write({
      ...before,
      events: [...before.events, ...end.events],
      ...(end.finish && { finish: end.finish }),
    });
    return end.continues ? startOf(committed) : null;
  }

  private async retrying(error: WakeloopError, attempt: number, delayMs: number): Promise<void> {
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
  }

  private async requestFailed(start: SessionEvent, error: unknown): Promise<void> {
    const failure =
      error instanceof WakeloopError ? error : new WakeloopError("model_request_failed", String(error));
    this.assertLease();
    const end = requestEnd(start, ZERO, true);
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

  /**
   * Ends the turn as the user asked: every call that has not run (pending, answered but not run, or
   * stopped by the interrupt) gets its error result, except those `resolved` by results buffered in
   * this wake, and the session goes idle.
   */
  private async endForInterrupt(resolved: ReadonlySet<string> = new Set()): Promise<void> {
    const events: NewEvent[] = unrunCallIds(this.view.state)
      .filter((id) => !resolved.has(id))
      .map((id) => resultEvent(this.view.isMcpCall(id), id, textContent(INTERRUPTED_BEFORE_RUN), true));
    await this.idle({ type: "end_turn" }, events);
  }

  private async idle(
    stopReason: StopReason,
    before: NewEvent[] = [],
    ledger: Omit<WriteInput, "events"> = {},
  ) {
    await this.commitEnd(idleEnd(stopReason), { ...ledger, events: before });
  }

  /** An unexpected failure: say so on the session, end the turn, close the wake as failed. */
  async fail(error: unknown): Promise<"lease_lost" | "error"> {
    if (this.signals.lost.aborted || (error instanceof WakeloopError && error.code === "stale_fence")) {
      this.log.warn({ err: error }, "wake ended: lease lost");
      return "lease_lost";
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
    return "error";
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

type ResolvedClient = { resolved: Awaited<ReturnType<ModelClients>> } | { refusal: unknown };
type ModelResponse = Awaited<ReturnType<typeof callModel>>;

function idleEnd(stopReason: StopReason): StepEnd {
  return {
    events: [{ type: "session.status_idle", stop_reason: stopReason }],
    finish: "completed",
    continues: false,
  };
}

/** The start this commit opened: its last model request start. */
function startOf(committed: readonly SessionEvent[]): SessionEvent | null {
  return committed.findLast((event) => event.type === "span.model_request_start") ?? null;
}

function requestEnd(start: SessionEvent, usage: TokenUsage, isError: boolean): NewEvent {
  return {
    type: "span.model_request_end",
    model_request_start_id: start.id,
    model_usage: usage,
    is_error: isError,
  };
}

/**
 * The ledger rows of a step whose calls run in the commit that announces them: only the calls it
 * leaves unsettled (awaiting an allow). A call that runs here commits its announcement, its effect and
 * its result together or not at all, so its outcome is never unknown and its events are its record;
 * a ledger row would repeat them (with its one-call plan, about a quarter of a state-tool step's
 * statement).
 */
function unsettled(planned: readonly ToolCallRecord[], settled: readonly ToolCallUpdate[]): ToolCallRecord[] {
  const ids = new Set(settled.map((update) => update.id));
  return planned.filter((call) => !ids.has(call.id));
}

const ZERO: TokenUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

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
