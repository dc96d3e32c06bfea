import { randomFillSync } from "node:crypto";
import { ID_PREFIX, type IdKind } from "@wakeloop/contracts";
import { monotonicFactory } from "ulid";

// ulid's own generator asks the OS for one random byte per character (16 calls per new millisecond,
// ~2 % of a worker's CPU on the session loop); these come from a pool filled 4 KiB at a time, still
// from the system's CSPRNG.
const pool = new Uint8Array(4096);
let next = pool.length;
function randomFraction(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}

// Monotonic so ids made in the same millisecond by this process still sort in creation order.
const nextUlid = monotonicFactory(randomFraction);

/** A new id like `sesn_01JD3…`: readable prefix plus a ULID, so ids sort by creation time. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${nextUlid().toLowerCase()}`;
}
