import { WakeloopError } from "@wakeloop/contracts";

export const DEFAULT_PREFIX = "wl";

// One or more dot-separated tokens of safe characters: no wildcards, whitespace or empty tokens.
const TOKENS = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const TOKEN = /^[A-Za-z0-9_-]+$/;

function checked(value: string, what: string, pattern: RegExp): string {
  if (!pattern.test(value)) {
    throw new WakeloopError(
      "bus_invalid_subject_token",
      `${what} ${JSON.stringify(value)} is not a valid subject token`,
    );
  }
  return value;
}

/** The subject layout of DESIGN §8, bound to one prefix so tests and deployments sharing a NATS stay apart. */
export interface Subjects {
  readonly prefix: string;
  /** `<p>.evt.<tenant>.<session>.<type>`; an event type such as `user.message` spans two tokens. */
  evt(tenant: string, session: string, type: string): string;
  /** Every event subject of one session: `<p>.evt.<tenant>.<session>.>`. */
  sessionEvents(tenant: string, session: string): string;
  wake(tenant: string, session: string): string;
  svc(service: string, action: string): string;
  ctl(session: string): string;
  deadLetter(kind: string): string;
  /** `<PREFIX>_<KIND>`: JetStream names allow no dots, and uppercase keeps them apart from subjects. */
  stream(kind: string): string;
}

export function streamNamePrefix(prefix: string): string {
  return checked(prefix, "prefix", TOKENS).toUpperCase().replaceAll(".", "_");
}

export function subjects(prefix: string = DEFAULT_PREFIX): Subjects {
  checked(prefix, "prefix", TOKENS);
  const p = prefix;
  return {
    prefix,
    evt: (tenant, session, type) =>
      `${p}.evt.${checked(tenant, "tenant", TOKEN)}.${checked(session, "session", TOKEN)}.${checked(type, "event type", TOKENS)}`,
    sessionEvents: (tenant, session) =>
      `${p}.evt.${checked(tenant, "tenant", TOKEN)}.${checked(session, "session", TOKEN)}.>`,
    wake: (tenant, session) =>
      `${p}.wake.${checked(tenant, "tenant", TOKEN)}.${checked(session, "session", TOKEN)}`,
    svc: (service, action) =>
      `${p}.svc.${checked(service, "service", TOKEN)}.${checked(action, "action", TOKEN)}`,
    ctl: (session) => `${p}.ctl.${checked(session, "session", TOKEN)}`,
    deadLetter: (kind) => `${p}.dlq.${checked(kind, "dead-letter kind", TOKEN)}`,
    stream: (kind) => `${streamNamePrefix(p)}_${checked(kind, "stream kind", TOKEN).toUpperCase()}`,
  };
}
