import { AgentSpec } from "@wakeloop/contracts";
import { readAgentVersion, readJson, repinSessions, reviseAgent, withTenant } from "@wakeloop/db";
import { applyPromptEdit, EditSystemPromptInput } from "@wakeloop/tool-runtime";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * `read_system_prompt` / `edit_system_prompt`. An edit revises the agent's latest version (locked, so
 * two sessions editing at once each build on the other's edit) and moves this session onto the new
 * version for its next wake, in the transaction its result commits in: the edit, the pin and the
 * result are one commit. The running wake keeps the prompt it started with.
 */
export async function runSelfEditTool(
  ctx: ToolContext,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  const { view } = ctx;
  const scope = { tenantId: view.tenantId, agentId: view.agentId };
  switch (name) {
    case "read_system_prompt": {
      const latest = await readAgentVersion(ctx.db, scope);
      if (latest === null) return errorOutcome(`agent ${view.agentId} no longer exists`);
      const spec = readJson(AgentSpec, latest.spec, `agent ${view.agentId} v${latest.version}`);
      return jsonOutcome({ prompt: spec.system, version: latest.version });
    }
    case "edit_system_prompt": {
      const edit = EditSystemPromptInput.parse(input);
      let refusal: string | null = null;
      // One transaction for the version and the pin, whether or not the call commits with its result.
      const revised = await withTenant(ctx.db, view.tenantId, async (trx) => {
        const result = await reviseAgent(
          trx,
          scope,
          (latest) => {
            if (latest.archived) {
              refusal = "this agent is archived; its prompt cannot change";
              return null;
            }
            const spec = readJson(AgentSpec, latest.spec, `agent ${view.agentId} v${latest.version}`);
            const edited = applyPromptEdit(spec.system, edit);
            if (!edited.ok) {
              refusal = edited.error;
              return null;
            }
            return edited.prompt === spec.system
              ? null
              : { name: spec.name, spec: { ...spec, system: edited.prompt } };
          },
          new Date(),
        );
        // An edit that changed nothing made no version, and moves nothing.
        if (result?.created)
          await repinSessions(trx, { ...scope, sessionId: view.sessionId }, result.version);
        return result;
      });
      if (refusal !== null) return errorOutcome(refusal);
      if (revised === null) return errorOutcome(`agent ${view.agentId} no longer exists`);
      return jsonOutcome({
        version: revised.version,
        changed: revised.created,
        applies_from: "next_wake",
      });
    }
    default:
      return null;
  }
}
