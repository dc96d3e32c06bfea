import { MemoryToolName, SandboxToolName } from "@wakeloop/contracts";
import { checkPermission, describePermissions, TOOL_SEARCH } from "@wakeloop/tool-runtime";
import { effectiveTools } from "../context/build-request";
import { runAgentCodeTool } from "./agent-code-tools";
import { runAgentDefinedTool } from "./agent-defined-tool";
import { runDataTool } from "./data-tools";
import { runLlmGenerate } from "./llm-generate";
import { runNavigationTool } from "./navigation-tools";
import { EVALUATOR_GATED_TOOLS, evaluatorGate, outcomePosture, runOutcomeTool } from "./outcome-tools";
import { runSelfEditTool } from "./self-edit-tools";
import { runStateTool } from "./state-tools";
import { runSubSessionTool } from "./sub-session-tools";
import { runTimeTool } from "./time-tools";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";
import { runToolSearch } from "./tool-search";
import { runUiTool } from "./ui-tools";
import { runVaultList } from "./vault-tools";
import { runWebTool } from "./web-tools";

/** Runs one allowed call on its executor. Throws only for failures of our own machinery. */
export async function executeTool(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  const { view } = ctx;
  // Checked again here, not only at planning: an outcome may have been defined since the plan.
  const refusal = await evaluatorGate(ctx.db, sessionScope(ctx), call.tool.name);
  if (refusal !== null) return errorOutcome(refusal);
  if (call.tool.ownership === "agent") return runAgentDefinedTool(ctx, call);
  switch (call.tool.executor) {
    case "inline":
      return (
        (await runInline(ctx, call)) ?? errorOutcome(`tool ${call.tool.name} has no inline implementation`)
      );
    case "sandbox": {
      if (ctx.sandbox === null || view.environment === null) {
        return errorOutcome("This session has no sandbox, so sandbox tools cannot run.");
      }
      const tool = SandboxToolName.safeParse(call.tool.name);
      if (!tool.success) return errorOutcome(`tool ${call.tool.name} is not a sandbox tool`);
      const result = await ctx.sandbox.execute({
        tenantId: view.tenantId,
        sessionId: view.sessionId,
        toolCallId: call.id,
        tool: tool.data,
        input: call.input,
        approved: call.approved === true,
        wakeId: ctx.writer.wakeId,
        ...(call.tool.interruptBehavior === "cancel" && { signal: ctx.signal }),
      });
      if (result.outcome === "needs_approval") {
        // Planning asks before running whatever the exec policy would ask for; reaching this means the
        // environment's policy changed in between, so the call is refused rather than run unapproved.
        return errorOutcome(
          `The command needs approval (${result.reason}); call the tool again to ask for it.`,
        );
      }
      return { content: result.content, isError: result.is_error, result: result.result };
    }
    case "memory": {
      const tool = MemoryToolName.safeParse(call.tool.name);
      if (ctx.memory === null || !tool.success) {
        return errorOutcome(`tool ${call.tool.name} cannot run: this worker has no memory service`);
      }
      const result = await ctx.memory.execute({
        tenant_id: view.tenantId,
        agent_id: view.agentId,
        session_id: view.sessionId,
        wake_id: ctx.writer.wakeId,
        tool_call_id: call.id,
        tool: tool.data,
        input: call.input,
      });
      return { content: result.content, isError: result.is_error, result: result.result };
    }
    case "web":
      return runWebTool(ctx.web, { name: call.tool.name, input: call.input }, ctx.signal);
    case "mcp": {
      const { mcpServerName, mcpToolName } = call.tool;
      if (ctx.mcp === null || mcpServerName === undefined || mcpToolName === undefined) {
        return errorOutcome(`tool ${call.tool.name} cannot run: its MCP server is not connected`);
      }
      return ctx.mcp.call(
        mcpServerName,
        { tool: mcpToolName, input: call.input, idempotent: call.tool.idempotent },
        ctx.signal,
      );
    }
    default:
      return errorOutcome(
        `tool ${call.tool.name} runs on the ${call.tool.executor} executor, which this platform does not offer yet`,
      );
  }
}

async function runInline(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome | null> {
  const { view } = ctx;
  if (call.tool.name === "permissions_describe" || call.tool.name === "permissions_check") {
    return runPermissionTool(ctx, call);
  }
  if (call.tool.group === "automation") {
    return runTimeTool(
      ctx.db,
      { tenantId: view.tenantId, agentId: view.agentId, sessionId: view.sessionId },
      { name: call.tool.name, input: call.input },
      {
        now: new Date(),
        agentModel: view.agent.model,
        maxTasksPerAgent: ctx.settings.maxScheduledTasksPerAgent,
        maxRemindersPerSession: ctx.settings.maxRemindersPerSession,
      },
    );
  }
  if (call.tool.name === "llm_generate") return runLlmGenerate(ctx, call.input);
  if (call.tool.name === TOOL_SEARCH) return runToolSearch(ctx, call.input);
  if (call.tool.name === "vault_list") return runVaultList(ctx);
  if (call.tool.group === "messaging") return runUiTool(ctx, call);
  return (
    (await runAgentCodeTool(
      ctx.db,
      { tenantId: view.tenantId, agentId: view.agentId, sessionId: view.sessionId },
      call,
    )) ??
    (await runDataTool(ctx, call.tool.name, call.input)) ??
    (await runNavigationTool(ctx, call.tool.name, call.input)) ??
    (await runSelfEditTool(ctx, call.tool.name, call.input)) ??
    (await runSubSessionTool(ctx, call.tool.name, call.input)) ??
    (await runOutcomeTool(ctx, call.tool.name, call.input)) ??
    runStateTool(
      ctx.db,
      { tenantId: view.tenantId, agentId: view.agentId },
      call.tool.name,
      call.input,
      ctx.agentState,
    )
  );
}

/** The permission views, with the evaluator gate of shared writes while an outcome is active. */
async function runPermissionTool(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  const state = {
    effective: effectiveTools(ctx.view, ctx.settings),
    pendingActions: ctx.view.state.pending_actions,
  };
  if (call.tool.name === "permissions_describe") {
    return jsonOutcome({
      ...describePermissions(state),
      evaluator_gated_tools: [...EVALUATOR_GATED_TOOLS],
      outcome_evaluation: await outcomePosture(ctx.db, sessionScope(ctx)),
    });
  }
  const toolName = String(call.input.tool_name ?? "");
  const check = checkPermission(toolName, state);
  if (!EVALUATOR_GATED_TOOLS.has(toolName)) return jsonOutcome(check);
  const posture = await outcomePosture(ctx.db, sessionScope(ctx));
  return jsonOutcome({
    ...check,
    evaluator_gated: true,
    outcome_evaluation: posture,
    blocked_by_evaluator: posture !== null && !posture.promotion_ready,
    next_outcome_step: posture?.next_step ?? null,
  });
}

function sessionScope(ctx: ToolContext) {
  return { tenantId: ctx.view.tenantId, sessionId: ctx.view.sessionId };
}
