import { z } from "zod";

/*
 * OpenAI's `POST /v1/embeddings`, answered deterministically without a model: a hashed bag of word
 * stems. Texts sharing word stems get close vectors and texts sharing none get near-orthogonal ones, so
 * a retrieval test can tell a semantic neighbour from noise while every run gives the same numbers.
 */

/** Dimensions when the request does not ask for some (OpenAI's `dimensions`). */
export const FAKE_EMBEDDING_DIMENSIONS = 256;

export const EmbeddingsRequest = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1).max(2_048)]),
  encoding_format: z.enum(["float", "base64"]).default("float"),
  dimensions: z.number().int().min(8).max(4_096).optional(),
});

/** Words too common to say anything about a text; leaving them out keeps similarities crisp. */
const STOP_WORDS = new Set(
  "a an and are as at be by do does for from has have how in is it its of on or our so that the this to was we what when where which who will with you your".split(
    " ",
  ),
);

/** A crude English stem (rotates, rotated, rotating, rotation → rotat): enough for paraphrases to meet. */
export function fakeStem(word: string): string {
  const stem = word.replace(/(?:ations?|ions?|ings?|ed|es|s)$/, "");
  return (stem.length >= 3 ? stem : word).replace(/e$/, "");
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The text's unit-length vector: each stem adds ±1 to the dimension its hash picks. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    const hash = fnv1a(fakeStem(word));
    vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + (hash >>> 31 === 0 ? 1 : -1);
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** What OpenAI returns; `base64` is the little-endian float32 bytes the official SDK asks for by default. */
export function embeddingsBody(request: z.output<typeof EmbeddingsRequest>) {
  const inputs = typeof request.input === "string" ? [request.input] : request.input;
  const dimensions = request.dimensions ?? FAKE_EMBEDDING_DIMENSIONS;
  const tokens = inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    object: "list",
    model: request.model,
    data: inputs.map((text, index) => {
      const vector = fakeEmbedding(text, dimensions);
      return {
        object: "embedding",
        index,
        embedding:
          request.encoding_format === "base64"
            ? Buffer.from(Float32Array.from(vector).buffer).toString("base64")
            : vector,
      };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
