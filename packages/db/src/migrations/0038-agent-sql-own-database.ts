import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// Agent SQL moves out of the platform's database into a database of its own (issue #30 item 1; see
// agent-sql-migrations/0001): an agent statement here could notify the outbox channel, read the
// platform's catalog, and share its locks and large objects. What migrations 0016 and 0031 made here goes:
// every agent role's objects and the role itself (their data is not carried over: Postgres cannot move
// rows between databases in one statement, and agents start again with an empty database), the tables
// and the definer functions. The revokes of 0016 on the public schema and on temporary tables stay.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `DO $$
    DECLARE
      agent record;
    BEGIN
      FOR agent IN SELECT s.role_name FROM agent_sql_schemas s JOIN pg_roles r ON r.rolname = s.role_name
      LOOP
        EXECUTE format('DROP OWNED BY %I CASCADE', agent.role_name);
        EXECUTE format('DROP ROLE %I', agent.role_name);
      END LOOP;
    END
    $$`,
    "DROP FUNCTION wl_agent_sql_enter(text, text)",
    "DROP FUNCTION wl_agent_sql_leave(bigint)",
    "DROP FUNCTION wl_agent_sql_drop(text, text)",
    "DROP TABLE agent_sql_entries",
    "DROP TABLE agent_sql_schemas",
  ]);
}
