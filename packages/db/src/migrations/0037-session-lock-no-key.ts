import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * The session row's lock in a lease and an append does not wait on foreign-key checks (issue #9).
 *
 * `wl_acquire_lease` and `wl_append` lock the session row `FOR UPDATE`, which also conflicts with the
 * `FOR KEY SHARE` lock every insert referencing the session takes for its foreign key: the event
 * indexer's batch (memory-retrieval) and the span exporter hold it until they commit, and a worker's
 * lease or step waited for them (pg_stat_statements: the lease's lock statement ~0.5 ms a call against
 * ~20 µs for the append's, under load). Neither function changes the row's key, so `FOR NO KEY
 * UPDATE` serves: appenders and leases still queue on each other, and checks referencing the row
 * no longer hold them up.
 *
 * The two functions are redefined from their own current text with only the lock clause changed, so
 * nothing else about them is copied here; the statement refuses to run when a function's text does not
 * hold the clause exactly once.
 */
const FUNCTIONS = [
  "wl_append(text, text, bigint, integer, jsonb, jsonb, jsonb, timestamptz, integer, jsonb, jsonb, jsonb, jsonb)",
  "wl_acquire_lease(text, text, text, text, integer)",
];
const CLAUSE = "WHERE s.tenant_id = p_tenant AND s.id = p_session FOR";

const relock = (from: string, to: string) => `DO $relock$
  DECLARE
    fn text;
    def text;
  BEGIN
    FOREACH fn IN ARRAY ARRAY[${FUNCTIONS.map((name) => `'${name}'`).join(", ")}] LOOP
      def := pg_get_functiondef(fn::regprocedure);
      IF array_length(string_to_array(def, '${CLAUSE} ${from};'), 1) <> 2 THEN
        RAISE EXCEPTION '% does not lock its session row FOR % exactly once', fn, '${from}';
      END IF;
      EXECUTE replace(def, '${CLAUSE} ${from};', '${CLAUSE} ${to};');
    END LOOP;
  END
$relock$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [relock("UPDATE", "NO KEY UPDATE")]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [relock("NO KEY UPDATE", "UPDATE")]);
}
