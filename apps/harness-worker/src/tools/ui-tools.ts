import { RenderBlocksInput, SendMessageInput, type UiBlock } from "@wakeloop/contracts";
import { readAgentCode, readAgentCodeVersion } from "@wakeloop/db";
import { z } from "zod";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * send_message and render_blocks: the event the client renders is committed with the call's result, so
 * a message is shown exactly when its call is recorded. Input the schema could not bound (the blocks'
 * total size) or a component the agent never stored is an error result the model can fix.
 */
export async function runUiTool(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome | null> {
  switch (call.tool.name) {
    case "send_message": {
      const parsed = SendMessageInput.safeParse(call.input);
      if (!parsed.success) return errorOutcome(`send_message: ${z.prettifyError(parsed.error)}`);
      return {
        ...jsonOutcome({ ok: true }),
        events: [{ type: "agent.ui_message", tool_use_id: call.id, text: parsed.data.text }],
      };
    }
    case "render_blocks": {
      const parsed = RenderBlocksInput.safeParse(call.input);
      if (!parsed.success) return errorOutcome(`render_blocks: ${z.prettifyError(parsed.error)}`);
      const { title } = parsed.data;
      const blocks: UiBlock[] = [];
      for (const block of parsed.data.blocks) {
        if (block.type !== "component") {
          blocks.push(block);
          continue;
        }
        const version = await componentVersion(ctx, block.component, block.version);
        if (version === null) {
          return errorOutcome(
            `render_blocks: no UI component "${block.component}"${block.version === undefined ? "" : ` at version ${block.version}`}; list_ui_components shows what exists`,
          );
        }
        // Pinned in the event, so the client renders what was shown even after a later update.
        blocks.push({ ...block, version });
      }
      return {
        ...jsonOutcome({ ok: true, rendered: blocks.length }),
        events: [{ type: "agent.ui_blocks", tool_use_id: call.id, blocks, ...(title && { title }) }],
      };
    }
    default:
      return null;
  }
}

async function componentVersion(
  ctx: ToolContext,
  name: string,
  version: number | undefined,
): Promise<number | null> {
  const scope = { tenantId: ctx.view.tenantId, agentId: ctx.view.agentId };
  const item =
    version === undefined
      ? await readAgentCode(ctx.db, scope, "ui_component", name)
      : await readAgentCodeVersion(ctx.db, scope, "ui_component", name, version);
  return item?.version ?? null;
}
