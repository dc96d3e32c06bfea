import type { Tracer } from "@opentelemetry/api";
import { addUsage, WakeloopError } from "@wakeloop/contracts";
import type { NewEvent } from "@wakeloop/db";
import { pendingCompaction } from "../context/build-request";
import { compactionEvent } from "../context/compaction-plan";
import { summaryRequest } from "../context/summary-request";
import { callModel } from "../model/call-model";
import type { ModelClients } from "../model/model-clients";
import type { SessionView } from "../session/session-view";
import type { SessionWriter } from "../session/session-writer";
import type { WakeMetrics } from "../wake-metrics";
import type { WakeSettings } from "../wake-settings";
import type { CostMeter } from "./cost-meter";

type ModelClient = Awaited<ReturnType<ModelClients>>;

export interface CompactionDeps {
  view: SessionView;
  writer: SessionWriter;
  settings: WakeSettings;
  tracer: Tracer;
  metrics: WakeMetrics;
  models: ModelClients;
  /** The wake's client for the agent's model. */
  client: ModelClient;
  signal: AbortSignal;
  /** The wake's meter: a summary is priced like any model request of the wake. */
  costs: CostMeter;
  /** What a retried summary request records (the step's `session.error{retrying}`). */
  hooks: Parameters<typeof callModel>[3]["hooks"];
}

/**
 * Compacts the history before the next request when it would pass the agent's threshold
 * (docs/context-management.md). A durable step: the summary is asked for first, and then one fenced
 * commit holds the `session.compaction` event with the summary's `session.usage`. A crash or a lost
 * lease before that commit leaves nothing, and the next wake plans the same compaction again; after
 * it, every later request (this wake's, through the view's history, and every later wake's) goes on
 * from it. Returns whether it compacted; a failed summary request throws, as the step's request would.
 */
export async function compactContext(deps: CompactionDeps): Promise<boolean> {
  const { view } = deps;
  const pending = pendingCompaction(view, deps.settings);
  if (pending === null) return false;
  const { plan } = pending;
  const events: NewEvent[] = [];
  let summary: { text: string; model: string } | null = null;
  if (plan.strategy === "summary") {
    const { client, model } = await summaryClient(deps);
    const response = await callModel(
      deps.tracer,
      client,
      summaryRequest(model, pending.previousSummary, plan.summarised),
      {
        signal: deps.signal,
        retry: deps.settings.retry,
        metrics: deps.metrics,
        hooks: deps.hooks,
      },
    );
    const text = response.text.trim();
    // An empty summary would drop the history it stands for: the step fails as a failed request does.
    if (text === "") throw new WakeloopError("model_request_failed", `the summary from ${model} was empty`);
    summary = { text, model };
    events.push({
      type: "session.usage",
      usage: addUsage(view.state.usage, response.usage),
      budget: view.state.budget,
      cost: deps.costs.charge([{ provider: client.provider, model, usage: response.usage }]),
    });
  }
  const draft = compactionEvent(plan, summary, { before: pending.tokensBefore, after: 0 });
  const compaction = compactionEvent(plan, summary, {
    before: pending.tokensBefore,
    after: pending.tokensAfter(draft),
  });
  await deps.writer.write({ events: [compaction, ...events] });
  return true;
}

/** The agent's model, or the model the operator maps to the `llm_generate` level it names. */
async function summaryClient(deps: CompactionDeps): Promise<{ client: ModelClient; model: string }> {
  const agentModel = deps.view.agent.model;
  const level = deps.view.agent.context_management?.summary_model ?? "agent";
  const model = level === "agent" ? agentModel.id : (deps.settings.llmModels[level] ?? agentModel.id);
  if (model === agentModel.id) return { client: deps.client, model };
  return { client: await deps.models(deps.view.tenantId, { ...agentModel, id: model }), model };
}
