import {
  type AgentScope,
  type AgentStateWrite,
  type Database,
  deleteAgentState,
  getAgentState,
  listAgentStateKeys,
  setAgentState,
} from "@wakeloop/db";
import {
  DeleteStateInput,
  type EffectiveTool,
  GetStateInput,
  ListStateKeysInput,
  SetStateInput,
} from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * The state tools whose effect can ride in the step's append (`AppendInput.agentState`): a step
 * calling only these commits in one statement, without a transaction around it.
 */
const APPENDED_STATE_TOOLS: ReadonlySet<string> = new Set(["set_state"]);

export function writesWithAppend(tool: Pick<EffectiveTool, "name" | "executor">): boolean {
  return tool.executor === "inline" && APPENDED_STATE_TOOLS.has(tool.name);
}

/**
 * The personal-agent state tools; `db` is the transaction the call's result commits in, when there is
 * one. Given `appended`, `set_state` adds its write there instead, for the append that commits its result.
 */
export async function runStateTool(
  db: Kysely<Database>,
  scope: AgentScope,
  name: string,
  input: Record<string, unknown>,
  appended?: AgentStateWrite[],
): Promise<ToolOutcome | null> {
  switch (name) {
    case "get_state": {
      const { key } = GetStateInput.parse(input);
      return jsonOutcome({ key, value: await getAgentState(db, scope, key) });
    }
    case "set_state": {
      const { key, value } = SetStateInput.parse(input);
      if (appended) appended.push({ key, value });
      else await setAgentState(db, scope, key, value);
      return jsonOutcome({ key, stored: true });
    }
    case "delete_state": {
      const { key } = DeleteStateInput.parse(input);
      return jsonOutcome({ key, deleted: await deleteAgentState(db, scope, key) });
    }
    case "list_state_keys": {
      const { prefix } = ListStateKeysInput.parse(input);
      return jsonOutcome({
        keys: await listAgentStateKeys(db, scope, { ...(prefix && { prefix }), limit: 1_000 }),
      });
    }
    default:
      return null;
  }
}
