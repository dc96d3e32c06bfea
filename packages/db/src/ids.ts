import { ID_PREFIX, type IdKind } from "@wakeloop/contracts";
import { monotonicFactory } from "ulid";

// Monotonic so ids made in the same millisecond by this process still sort in creation order.
const nextUlid = monotonicFactory();

/** A new id like `sesn_01JD3…`: readable prefix plus a ULID, so ids sort by creation time. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${nextUlid().toLowerCase()}`;
}
