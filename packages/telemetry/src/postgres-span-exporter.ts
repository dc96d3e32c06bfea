import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Database } from "@wakeloop/db";
import type { Kysely } from "kysely";
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
    await this.#db
      .insertInto("spans")
      .values(spans.map(toSpanRow))
      // A batch retried after a lost reply must not fail on the rows it already wrote.
      .onConflict((conflict) => conflict.columns(["trace_id", "span_id"]).doNothing())
      .execute();
  }
}
