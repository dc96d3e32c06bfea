import { createHash } from "node:crypto";

/** Learnings taken from one reply at most; the rest of a longer list is ignored. */
export const MAX_LEARNINGS_PER_REPLY = 5;
/** The longest learning kept (the memory service's limit for one). */
const MAX_LEARNING_CHARS = 4_000;

const DIRECTIVE = /<learning>([\s\S]*?)<\/learning>/gi;

/**
 * The model's learning directives in a reply, each with a key derived from its text: the same lesson
 * stated again (in a later reply, wake or session, or by a retried wake) is captured once.
 */
export function learningDirectives(text: string): Array<{ key: string; text: string }> {
  const found = new Map<string, string>();
  for (const match of text.matchAll(DIRECTIVE)) {
    const lesson = (match[1] ?? "").trim().replace(/\s+/g, " ").slice(0, MAX_LEARNING_CHARS);
    if (lesson === "") continue;
    const digest = createHash("sha256").update(lesson.toLowerCase()).digest("hex").slice(0, 24);
    found.set(`directive:${digest}`, lesson);
    if (found.size === MAX_LEARNINGS_PER_REPLY) break;
  }
  return [...found].map(([key, lesson]) => ({ key, text: lesson }));
}
