import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Database } from "@wakeloop/db";
import { type Kysely, sql } from "kysely";
import { toSpanRow } from "./span-row";

/**
 * Persists finished spans into the `spans` table, so a wake's trace can be read back through the API
 * with no tracing backend running (DESIGN §9). Used behind a BatchSpanProcessor: one INSERT per batch.
 * The database handle belongs to the caller, who closes it after telemetry has shut down.
 */
export class PostgresSpanExporter implements SpanExporter {
  readonly #db: Kysely<Database>;
  readonly #pending = new Set<Promise<void>>();

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const write = this.#insert(spans).then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (error: unknown) =>
        resultCallback({
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.#pending);
  }

  shutdown(): Promise<void> {
    return this.forceFlush();
  }

  async #insert(spans: ReadableSpan[]): Promise<void> {
    if (spans.length === 0) return;
    // A batch holds spans of many tenants and of none, so it goes through the definer function that
    // only inserts spans (migration 0009). It skips rows already written, so a retried batch succeeds.
    await sql`SELECT wl_insert_spans(${JSON.stringify(spans.map(toSpanRow))}::jsonb)`.execute(this.#db);
  }
}
