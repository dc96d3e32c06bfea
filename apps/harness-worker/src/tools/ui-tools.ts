import { RenderBlocksInput, SendMessageInput } from "@wakeloop/contracts";
import { z } from "zod";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * send_message and render_blocks: the event the client renders is committed with the call's result, so
 * a message is shown exactly when its call is recorded. Input the schema could not bound (the blocks'
 * total size) is an error result the model can fix.
 */
export function runUiTool(
  toolUseId: string,
  name: string,
  input: Record<string, unknown>,
): ToolOutcome | null {
  switch (name) {
    case "send_message": {
      const parsed = SendMessageInput.safeParse(input);
      if (!parsed.success) return errorOutcome(`send_message: ${z.prettifyError(parsed.error)}`);
      return {
        ...jsonOutcome({ ok: true }),
        events: [{ type: "agent.ui_message", tool_use_id: toolUseId, text: parsed.data.text }],
      };
    }
    case "render_blocks": {
      const parsed = RenderBlocksInput.safeParse(input);
      if (!parsed.success) return errorOutcome(`render_blocks: ${z.prettifyError(parsed.error)}`);
      const { blocks, title } = parsed.data;
      return {
        ...jsonOutcome({ ok: true, rendered: blocks.length }),
        events: [{ type: "agent.ui_blocks", tool_use_id: toolUseId, blocks, ...(title && { title }) }],
      };
    }
    default:
      return null;
  }
}
