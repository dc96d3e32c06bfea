import type { RecalledMemory } from "@wakeloop/contracts";
import { estimateTokens } from "./assemble-context";

/** A recalled entry as the system context shows it: its heading and (maybe cut) content. */
export interface RecallSection {
  store: string;
  target: string;
  version_id: string;
  text: string;
  tokens: number;
  truncated: boolean;
}

/** A cut entry smaller than this says too little to be worth its heading. */
const MIN_CUT_TOKENS = 16;

export function recallSectionText(store: string, target: string, content: string): string {
  return `### ${store}/${target}\n${content}`;
}

/** The recalled entries as the model reads them, after the messages they were recalled for. */
export function recallText(sections: readonly RecallSection[]): string {
  const entries = sections.map((section) => section.text).join("\n\n");
  return `## Recalled memory\nEntries of your memory that match the new input; reread one with memory_read before relying on it.\n\n${entries}`;
}

/**
 * Keeps the best hits (in the service's rank order) whose sections fit in `budgetTokens` together;
 * the first that does not fit is cut to the rest of the budget when at least `MIN_CUT_TOKENS` remain,
 * and every later hit is dropped, so a lower-ranked hit never takes the place of a better one.
 */
export function fitRecall(
  hits: readonly RecalledMemory[],
  budgetTokens: number,
): { sections: RecallSection[]; dropped: number } {
  const sections: RecallSection[] = [];
  let left = budgetTokens;
  for (const hit of hits) {
    const text = recallSectionText(hit.store, hit.target, hit.content);
    const tokens = estimateTokens(text);
    if (tokens <= left) {
      sections.push({ ...entryOf(hit), text, tokens, truncated: false });
      left -= tokens;
      continue;
    }
    const cut = left >= MIN_CUT_TOKENS ? cutToTokens(text, left) : null;
    if (cut !== null) sections.push({ ...entryOf(hit), text: cut.text, tokens: cut.tokens, truncated: true });
    break;
  }
  return { sections, dropped: hits.length - sections.length };
}

function entryOf(hit: RecalledMemory) {
  return { store: hit.store, target: hit.target, version_id: hit.version_id };
}

/** The longest prefix (ending in "…") whose estimate fits; escapes make the estimate exceed length/4. */
function cutToTokens(text: string, tokens: number): { text: string; tokens: number } | null {
  let chars = tokens * 4;
  while (chars > 0) {
    const cut = `${text.slice(0, chars - 1)}…`;
    const estimate = estimateTokens(cut);
    if (estimate <= tokens) return { text: cut, tokens: estimate };
    chars -= (estimate - tokens) * 4;
  }
  return null;
}
