import { type MemoryAuthor, WakeloopError } from "@wakeloop/contracts";
import type { Database, MemoryLimits, MemoryScope } from "@wakeloop/db";
import type { Kysely } from "kysely";
import type { z } from "zod";
import type { EmbeddingsClient } from "./embeddings-client";
import { createVectorCache, type VectorCache } from "./vector-cache";

/** How retrieval searches: full text alone, or hybrid with the embeddings endpoint (docs/memory.md). */
export interface SearchSettings {
  /** null: full text only. */
  embeddings: EmbeddingsClient | null;
  /** Newest vectors of each kind ranked besides the full-text candidates. */
  vectorWindow: number;
  /** Cosine similarity a vector neighbour needs to count as a hit. */
  minSimilarity: number;
  /** Stored vectors this replica has read (keyed by their space, so any model may share it). */
  vectorCache: VectorCache;
}

export const FULL_TEXT_ONLY: SearchSettings = {
  embeddings: null,
  vectorWindow: 0,
  minSimilarity: 1,
  vectorCache: createVectorCache(0),
};

/** One memory tool call as the tools see it. */
export interface ToolCall {
  /** The pool for reads; for writes, the transaction their idempotency record commits in. */
  db: Kysely<Database>;
  scope: MemoryScope;
  sessionId: string;
  author: MemoryAuthor;
  input: unknown;
  limits: MemoryLimits;
  search: SearchSettings;
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, tool: string): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`);
    throw new WakeloopError("memory_invalid_input", `invalid ${tool} input: ${issues.join("; ")}`);
  }
  return parsed.data;
}

export function notFound(what: string, hint: string): WakeloopError {
  return new WakeloopError("memory_not_found", `${what} does not exist; ${hint}`);
}
