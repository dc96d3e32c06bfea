import { SandboxToolName } from "@wakeloop/contracts";
import { checkPermission, describePermissions } from "@wakeloop/tool-runtime";
import { effectiveTools } from "../context/build-request";
import { runStateTool } from "./state-tools";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/** Runs one allowed call on its executor. Throws only for failures of our own machinery. */
export async function executeTool(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  const { view } = ctx;
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
    default:
      return errorOutcome(
        `tool ${call.tool.name} runs on the ${call.tool.executor} executor, which this platform does not offer yet`,
      );
  }
}

async function runInline(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome | null> {
  const { view } = ctx;
  if (call.tool.name === "permissions_describe" || call.tool.name === "permissions_check") {
    const state = {
      effective: effectiveTools(view, ctx.settings),
      pendingActions: view.state.pending_actions,
    };
    if (call.tool.name === "permissions_describe") return jsonOutcome(describePermissions(state));
    return jsonOutcome(checkPermission(String(call.input.tool_name ?? ""), state));
  }
  return runStateTool(ctx.db, { tenantId: view.tenantId, agentId: view.agentId }, call.tool.name, call.input);
}
