import type { ApiKeyRole } from "@wakeloop/contracts";

/** Who is calling: the tenant every query is scoped to (invariant 9) and the key's role. */
export interface Principal {
  tenantId: string;
  keyId: string;
  role: ApiKeyRole;
}

/** The least role a route needs; `public` routes need no key. */
export type Access = ApiKeyRole | "public";

/** Owners may do everything members may. */
export function mayAccess(role: ApiKeyRole, access: Access): boolean {
  return access !== "owner" || role === "owner";
}
