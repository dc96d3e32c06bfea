import type { IncomingHttpHeaders } from "node:http";
import { WakeloopError } from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { findPrincipal } from "../api-keys/api-key-store";
import { type Access, mayAccess, type Principal } from "./principal";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key from `Authorization: Bearer <key>` or, failing that, `x-api-key`. */
export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const bearer = headers.authorization?.match(BEARER)?.[1];
  if (bearer !== undefined) return bearer;
  const header = headers["x-api-key"];
  const key = Array.isArray(header) ? header[0] : header;
  return key === undefined || key.trim() === "" ? null : key.trim();
}

/** 401 unless a live key is presented, 403 unless its role may use the route. */
export async function authenticate(
  db: Kysely<Database>,
  headers: IncomingHttpHeaders,
  access: Exclude<Access, "public">,
): Promise<Principal> {
  const key = presentedKey(headers);
  if (key === null) {
    throw new WakeloopError(
      "unauthenticated",
      "send an API key as `Authorization: Bearer <key>` or `x-api-key`",
    );
  }
  const principal = await findPrincipal(db, key);
  if (principal === null) throw new WakeloopError("unauthenticated", "the API key is unknown or revoked");
  if (!mayAccess(principal.role, access)) {
    throw new WakeloopError("forbidden", `this needs an ${access} key; yours is a ${principal.role} key`);
  }
  return principal;
}
