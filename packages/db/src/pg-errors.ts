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

/** Socket errors of a connection that could not be made or was cut. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** SQLSTATEs of a server going away or refusing connections: admin/crash shutdown, starting up, full. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"]);
/** pg and pg-pool report a lost or timed-out connection only in the message. */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * True when `error` says Postgres could not be reached or dropped the connection, rather than that the
 * statement was wrong: the same request can succeed once the database is back, so callers answer
 * "unavailable, retry" instead of treating it as a bug. Looks through `cause` and AggregateErrors
 * (a host name that resolves to several addresses fails with one error per address).
 */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  const code = "code" in error && typeof error.code === "string" ? error.code : undefined;
  if (error instanceof pg.DatabaseError) {
    return code !== undefined && (code.startsWith("08") || UNAVAILABLE_STATES.has(code));
  }
  if (code !== undefined && NETWORK_CODES.has(code)) return true;
  if (LOST_CONNECTION.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isConnectionFailure(inner, depth + 1)))
    return true;
  return isConnectionFailure(error.cause, depth + 1);
}
