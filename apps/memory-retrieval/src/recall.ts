import {
  type MemoryRecallRequest,
  type MemoryRecallResponse,
  NOTEPAD_STORE,
  SKILLS_STORE,
} from "@wakeloop/contracts";
import { type Database, readMemoryEntry, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { rankedSearch } from "./retrieval-tools";
import type { SearchSettings } from "./tool-call";

/** Skills and notepads are in the system context by other ways (the skills index, tools), never recalled. */
export const NOT_RECALLED = [SKILLS_STORE, NOTEPAD_STORE];

/** Words of the new input searched for at most; a long paste does not become a huge query. */
const MAX_QUERY_WORDS = 32;

/**
 * A websearch query matching any word of the input (`a or b or c`): a user's sentence rarely holds
 * every word of a note, and `ts_rank_cd` ranks entries matching more of them first. Words shorter than
 * three characters are left out, and `or`, the websearch operator, is not a word here.
 */
export function recallQuery(text: string): string | null {
  const words = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? []) {
    if (word === "or") continue;
    words.add(word);
    if (words.size === MAX_QUERY_WORDS) break;
  }
  return words.size === 0 ? null : [...words].join(" or ");
}

/**
 * The agent's memory entries (skills and notepads left out, as in `memory_search`) best matching the
 * new input, with their live content: the harness puts them in the system context within its budget.
 * The search is `memory_search`'s (hybrid when embeddings are on, the input's own text embedded); a
 * wake is no session's tool call, so no priors.
 */
export async function recallMemory(
  db: Kysely<Database>,
  request: MemoryRecallRequest,
  settings: SearchSettings,
): Promise<MemoryRecallResponse> {
  const query = recallQuery(request.text);
  if (query === null) return { hits: [] };
  const scope = { tenantId: request.tenant_id, agentId: request.agent_id };
  const { hits } = await rankedSearch(
    { db, scope, sessionId: null, search: settings },
    {
      query,
      meaning: request.text,
      limit: request.limit,
      memory: { excludeStores: NOT_RECALLED },
      events: null,
      spans: null,
    },
  );
  const found = hits.flatMap((hit) =>
    hit.found.source === "memory" ? [{ ...hit.found.row, rank: hit.ranked.score }] : [],
  );
  // One tenant transaction on one connection for the reads (the helper joins it).
  const entries = await withTenant(db, request.tenant_id, async (trx) => {
    const read = [];
    for (const hit of found) read.push(await readMemoryEntry(trx, scope, hit.store, hit.target));
    return read;
  });
  return {
    hits: found.flatMap((hit, index) => {
      const entry = entries[index];
      // Deleted between the search and the read: nothing to recall.
      if (entry === null || entry === undefined) return [];
      return [
        {
          store: hit.store,
          target: hit.target,
          version_id: entry.version_id,
          content: entry.content,
          rank: hit.rank,
        },
      ];
    }),
  };
}
