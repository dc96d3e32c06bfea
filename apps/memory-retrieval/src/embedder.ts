import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import {
  claimEmbeddingWork,
  configureEmbeddings,
  type Database,
  type EmbeddingWork,
  storeEmbeddings,
} from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import { type EmbeddingsClient, inputRejected } from "./embeddings-client";

/** First retry of a failed row after this long, doubling per attempt (1 s, 2 s, 4 s … about 2 min). */
export const EMBED_RETRY_MS = 1_000;
/** Attempts before a row is given up on (it stays in the backlog, counted as failed). */
export const EMBED_MAX_ATTEMPTS = 8;
/** Characters of a text sent to the model; embedding models take a few thousand tokens at most. */
export const EMBED_MAX_CHARS = 8_000;
/**
 * How long a replica's registration of its model lasts, and how often a running embedder renews it. A
 * model no replica renewed for this long is off: nothing more is queued for it and its queue is dropped.
 */
export const EMBED_MODEL_TTL_MS = 10 * 60_000;
export const EMBED_RENEW_MS = 60_000;

export interface EmbedderOptions {
  db: Kysely<Database>;
  log: Logger;
  /** null: this replica embeds nothing (and leaves other replicas' models alone). */
  embeddings: EmbeddingsClient | null;
  batchSize: number;
  pollMs: number;
}

/**
 * Embeds what the index and memory writes queue (migrations 0025, 0029), off their commit path: the
 * replica registers its model (renewed while it runs), then claims that model's due rows of every
 * tenant in batches, asks the endpoint for their vectors and stores them. A failed batch is tried again
 * row by row, so one text the endpoint refuses fails alone; failed rows come back after their retry
 * time. Full-text search never waits for any of it. A replica without embeddings only drops the models
 * no replica renewed.
 */
export async function startEmbedder(options: EmbedderOptions): Promise<{ stop(): Promise<void> }> {
  const { db, log, embeddings } = options;
  const queued = await configureEmbeddings(db, embeddings?.space ?? null, EMBED_MODEL_TTL_MS);
  if (embeddings === null) return { stop: async () => undefined };
  const client = embeddings;
  log.info({ model: client.space, queued }, "embedder started");
  const stopping = new AbortController();
  let renewed = performance.now();

  /** Keeps the model registered; after a lapse (a replica stopped for long) it queues what was missed. */
  async function renew(): Promise<void> {
    if (performance.now() - renewed < EMBED_RENEW_MS) return;
    const missed = await configureEmbeddings(db, client.space, EMBED_MODEL_TTL_MS);
    renewed = performance.now();
    if (missed > 0) log.warn({ model: client.space, queued: missed }, "embedding model registered again");
  }

  async function embedAll(work: EmbeddingWork[]): Promise<void> {
    const live = work.filter((row) => row.text !== null);
    const texts = live.map((row) => (row.text ?? "").slice(0, EMBED_MAX_CHARS));
    const vectors = live.length === 0 ? [] : await client.embed(texts);
    await storeEmbeddings(db, client.space, [
      ...live.map((row, index) => ({ ...row, vector: vectors[index] ?? null })),
      ...work.filter((row) => row.text === null).map((row) => ({ ...row, vector: null })),
    ]);
  }

  async function round(): Promise<number> {
    await renew();
    const work = await claimEmbeddingWork(db, {
      model: client.space,
      maxRows: options.batchSize,
      retryMs: EMBED_RETRY_MS,
      maxAttempts: EMBED_MAX_ATTEMPTS,
    });
    if (work.length === 0) return 0;
    try {
      await embedAll(work);
    } catch (error) {
      // An outage fails every row alike: they come back after their retry time. A refused input is
      // one row's problem: the others are tried alone now.
      if (!inputRejected(error) || work.length === 1) {
        log.warn({ err: error, rows: work.length }, "embedding a batch failed; retried later");
        return work.length;
      }
      log.warn({ err: error, rows: work.length }, "the endpoint refused a batch; trying its rows one by one");
      for (const row of work) {
        await embedAll([row]).catch((rowError: unknown) =>
          log.warn(
            { err: rowError, kind: row.kind, ref: row.ref, attempts: row.attempts },
            "embedding failed; retried later",
          ),
        );
      }
    }
    return work.length;
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let done = 0;
      try {
        done = await round();
      } catch (error) {
        log.warn({ err: error }, "embedder round failed");
      }
      // A full batch means more is due: go on at once; otherwise wait for new work.
      if (done < options.batchSize)
        await sleep(options.pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    stop: async () => {
      stopping.abort();
      await loop;
    },
  };
}
