import pg from "pg";

/** True when `error` is Postgres' unique violation, optionally of the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return (
    error instanceof pg.DatabaseError &&
    error.code === "23505" &&
    (constraint === undefined || error.constraint === constraint)
  );
}

/** True when Postgres refused for lack of a privilege, e.g. the services' role writing `tenants`. */
export function isInsufficientPrivilege(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === "42501";
}
