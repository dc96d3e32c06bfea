import { LRUCache } from "lru-cache";

/*
 * Stored vectors this replica has read, least recently used out first, within a byte budget
 * (`EMBEDDINGS_CACHE_MB`). A hybrid search ranks the agent's newest vectors on every call; reading them
 * all again each time moved megabytes of hex-encoded bytea per search through the pg driver, and the
 * garbage it left was the search's tail (docs/memory.md, "Embeddings"). A stored vector changes only
 * when it is embedded again, so each is held with the time it was embedded (its stamp) and used only
 * while Postgres reports the same stamp.
 */

export interface VectorCache {
  /** The vector stored under `key` with this stamp, if it is held (one of another stamp is dropped). */
  get(key: string, stamp: string): Float32Array | undefined;
  set(key: string, stamp: string, vector: Float32Array): void;
}

export function createVectorCache(maxBytes: number): VectorCache {
  if (maxBytes === 0) return { get: () => undefined, set: () => undefined };
  const held = new LRUCache<string, { stamp: string; vector: Float32Array }>({
    maxSize: maxBytes,
    sizeCalculation: (entry) => Math.max(1, entry.vector.byteLength),
  });
  return {
    get(key, stamp) {
      const entry = held.get(key);
      if (entry === undefined || entry.stamp === stamp) return entry?.vector;
      // Embedded again since: the bytes held are stale and only take room.
      held.delete(key);
      return undefined;
    },
    set(key, stamp, vector) {
      held.set(key, { stamp, vector });
    },
  };
}
