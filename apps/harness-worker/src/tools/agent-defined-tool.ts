import { textContent } from "@wakeloop/contracts";
import { listAgentCode, readAgentCodeVersion } from "@wakeloop/db";
import { libraryClosure, storedAgentToolName } from "@wakeloop/tool-runtime";
import { readToolRun, toolProgram } from "./agent-tool-program";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/** An agent-defined tool call stops after this long, as run_sandbox_code does by default. */
const AGENT_TOOL_TIMEOUT_MS = 30_000;

/**
 * Runs one call of an agent-defined tool in the session's sandbox: the version this wake offered,
 * with the current versions of the libraries it requires, through the sandbox runner's
 * run_sandbox_code (idempotent by call id, timed out and output-capped there). A tool deleted or
 * disabled since the wake began is refused rather than run.
 */
export async function runAgentDefinedTool(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  const { view } = ctx;
  const name = storedAgentToolName(call.tool.name) ?? "";
  const offered = view.agentTools.find((tool) => tool.name === name);
  if (offered === undefined) return errorOutcome(`${call.tool.name} is not one of this agent's tools`);
  if (ctx.sandbox === null)
    return errorOutcome("This session has no sandbox, so agent-defined tools cannot run.");
  const scope = { tenantId: view.tenantId, agentId: view.agentId };
  const tool = await readAgentCodeVersion(ctx.db, scope, "tool", name, offered.version);
  if (tool === null) return errorOutcome(`the tool "${name}" was deleted after this wake began`);
  if (!tool.enabled) return errorOutcome(`the tool "${name}" was disabled after this wake began`);
  const libraries = new Map(
    (await listAgentCode(ctx.db, scope, "library", { includeDisabled: true })).map((library) => [
      library.name,
      library,
    ]),
  );
  const staged = libraryClosure(tool.requires, libraries).flatMap((library) => {
    const code = libraries.get(library)?.code;
    return code === undefined ? [] : [{ name: library, code }];
  });
  const program = toolProgram({ marker: call.id, code: tool.code, libraries: staged, args: call.input });
  if (!program.ok) return errorOutcome(program.message);
  const result = await ctx.sandbox.execute({
    tenantId: view.tenantId,
    sessionId: view.sessionId,
    toolCallId: call.id,
    tool: "run_sandbox_code",
    input: { code: program.program, language: "javascript", timeout_ms: AGENT_TOOL_TIMEOUT_MS },
    approved: call.approved === true,
    signal: ctx.signal,
  });
  if (result.outcome === "needs_approval") {
    return errorOutcome(
      `The environment's exec policy wants approval to run node (${result.reason}); allow agent-defined tools to ask (always_ask) so a person's allow covers it.`,
    );
  }
  const output = result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  const run = readToolRun(output, call.id);
  if (run === null) {
    return errorOutcome(
      `${call.tool.name} ended without a result (timed out after ${AGENT_TOOL_TIMEOUT_MS} ms or crashed):\n${output.slice(-2_000)}`,
    );
  }
  if (!run.ok) {
    const logs = run.logs.length > 0 ? `\nlogs:\n${run.logs.join("\n")}` : "";
    return {
      content: textContent(`${call.tool.name} threw: ${run.error}${logs}`),
      isError: true,
      result: run,
    };
  }
  return jsonOutcome({ result: run.result, logs: run.logs, version: tool.version });
}
