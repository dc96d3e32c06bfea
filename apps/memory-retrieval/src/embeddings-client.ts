import { LRUCache } from "lru-cache";
import OpenAI from "openai";

/*
 * The operator's embeddings endpoint (OpenAI-compatible `POST /v1/embeddings`: OpenAI, vLLM, Ollama,
 * llama.cpp, the fake model server), through the official SDK, which retries rate limits, 5xx and
 * connection errors with backoff. No model runs in this service.
 */

export interface EmbeddingsSettings {
  /** Base URL with the API version, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  /** Sent as `dimensions` when set (models that can shorten their vectors). */
  dimensions: number | undefined;
  timeoutMs: number;
}

export interface EmbeddingsClient {
  /**
   * The space its vectors live in: the model, with `@dimensions` when they are shortened. Vectors are
   * stored and compared per space, so replicas configured differently never mix theirs.
   */
  readonly space: string;
  /** One vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** A search query's vector (no retries); the same query again is answered from a small cache. */
  embedQuery(text: string): Promise<Float32Array>;
}

/** Query vectors kept per replica; a model's vector of a text never changes. */
const QUERY_CACHE_SIZE = 256;

export function createEmbeddingsClient(settings: EmbeddingsSettings): EmbeddingsClient {
  const client = new OpenAI({
    baseURL: settings.baseUrl,
    // Local servers often take no key; the SDK insists on one, and sends it as a bearer token.
    apiKey: settings.apiKey ?? "unused",
    timeout: settings.timeoutMs,
    maxRetries: 2,
  });
  const cache = new LRUCache<string, Float32Array>({ max: QUERY_CACHE_SIZE });
  async function embed(texts: readonly string[], retries?: number): Promise<Float32Array[]> {
    const response = await client.embeddings.create(
      {
        model: settings.model,
        input: [...texts],
        encoding_format: "float",
        ...(settings.dimensions !== undefined && { dimensions: settings.dimensions }),
      },
      retries === undefined ? {} : { maxRetries: retries },
    );
    const vectors = new Array<Float32Array>(texts.length);
    for (const item of response.data) vectors[item.index] = Float32Array.from(item.embedding);
    if (vectors.some((vector) => vector === undefined) || response.data.length !== texts.length) {
      throw new Error(
        `the embeddings endpoint answered ${response.data.length} vectors for ${texts.length} texts`,
      );
    }
    return vectors;
  }
  return {
    space: settings.dimensions === undefined ? settings.model : `${settings.model}@${settings.dimensions}`,
    embed: (texts) => embed(texts),
    async embedQuery(text) {
      const cached = cache.get(text);
      if (cached !== undefined) return cached;
      // A search does not wait through retries: without the vector it answers with full text alone.
      const [vector] = await embed([text], 0);
      if (vector === undefined) throw new Error("the embeddings endpoint answered no vector");
      cache.set(text, vector);
      return vector;
    },
  };
}

/** The endpoint refused the request itself (4xx other than rate limits): sending it again will not help. */
export function inputRejected(error: unknown): boolean {
  return (
    error instanceof OpenAI.APIError &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 408 &&
    error.status !== 429
  );
}
