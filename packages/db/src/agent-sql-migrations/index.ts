import type { Migration } from "kysely";
import * as m0001 from "./0001-agent-databases";

/** The agent SQL database's migrations, in order (apart from the platform's; append-only likewise). */
export const AGENT_SQL_MIGRATIONS: Readonly<Record<string, Migration>> = {
  "0001-agent-databases": m0001,
};
