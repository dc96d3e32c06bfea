import type { AgentProcessSummary, ProcessInput } from "@wakeloop/contracts";
import {
  BACKGROUND_OUTPUT_CHARS,
  describeEnding,
  ok,
  outputWithNotice,
  type ToolOutcome,
} from "./output-format";
import type { ToolContext } from "./tool-context";

function status(p: AgentProcessSummary): string {
  return p.status === "running" ? `running for ${p.durationMs} ms` : describeEnding(p);
}

export async function processTool(ctx: ToolContext, input: ProcessInput): Promise<ToolOutcome> {
  const processId = input.process_id as string; // required by the schema for every action but list
  switch (input.action) {
    case "list": {
      const { processes } = await ctx.channel.call("proc.list", {});
      if (processes.length === 0) return ok("No background processes", { processes });
      const lines = processes.map((p) => `${p.processId} ${status(p)} $ ${p.command.slice(0, 200)}`);
      return ok(lines.join("\n"), { processes });
    }
    case "poll": {
      const result = await ctx.channel.call("proc.poll", {
        processId,
        offset: input.offset,
        limit: Math.min(input.limit, BACKGROUND_OUTPUT_CHARS),
      });
      const { page, ...summary } = result;
      const hint = (offset: number) =>
        `process ${JSON.stringify({ action: "poll", process_id: processId, offset })}`;
      const next = page.from + page.text.length;
      const text =
        `${processId}: ${status(summary)}\n${outputWithNotice(page, hint)}` +
        (summary.status === "running" ? `\n[poll again for new output with ${hint(next)}]` : "");
      return ok(text, { ...summary, from: page.from, next_offset: next, total: page.total });
    }
    case "write": {
      const result = await ctx.channel.call("proc.write", {
        processId,
        input: input.input ?? "",
        eof: input.eof,
      });
      return ok(
        `Wrote ${(input.input ?? "").length} characters to ${processId}${input.eof ? " and closed its stdin" : ""}`,
        result,
      );
    }
    case "signal": {
      const result = await ctx.channel.call("proc.signal", {
        processId,
        signal: input.signal,
      });
      return ok(`Sent ${input.signal} to ${processId} and its process group (${status(result)})`, result);
    }
  }
}
