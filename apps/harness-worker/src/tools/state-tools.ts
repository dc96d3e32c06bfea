import {
  type AgentScope,
  type Database,
  deleteAgentState,
  getAgentState,
  listAgentStateKeys,
  setAgentState,
} from "@wakeloop/db";
import { DeleteStateInput, GetStateInput, ListStateKeysInput, SetStateInput } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { jsonOutcome, type ToolOutcome } from "./tool-outcome";

/** The personal-agent state tools; `db` is the transaction the call's result commits in, when there is one. */
export async function runStateTool(
  db: Kysely<Database>,
  scope: AgentScope,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  switch (name) {
    case "get_state": {
      const { key } = GetStateInput.parse(input);
      return jsonOutcome({ key, value: await getAgentState(db, scope, key) });
    }
    case "set_state": {
      const { key, value } = SetStateInput.parse(input);
      await setAgentState(db, scope, key, value);
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
