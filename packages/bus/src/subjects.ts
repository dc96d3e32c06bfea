import { WakeloopError } from "@wakeloop/contracts";

export const DEFAULT_PREFIX = "wl";

// One or more dot-separated tokens of safe characters: no wildcards, whitespace or empty tokens.
const TOKENS = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const TOKEN = /^[A-Za-z0-9_-]+$/;
// Event types in a consumer filter: tokens as above, the last of which may be the `>` wildcard.
const TYPE_FILTER = /^([A-Za-z0-9_-]+\.)*([A-Za-z0-9_-]+|>)$/;

function checked(value: string, what: string, pattern: RegExp): string {
  if (!pattern.test(value)) {
    throw new WakeloopError(
      "bus_invalid_subject_token",
      `${what} ${JSON.stringify(value)} is not a valid subject token`,
    );
  }
  return value;
}

/** What an event subject names: the inverse of `Subjects.evt`. */
export interface EvtSubject {
  tenant: string;
  session: string;
  type: string;
}

/** The subject layout of DESIGN §8, bound to one prefix so tests and deployments sharing a NATS stay apart. */
export interface Subjects {
  readonly prefix: string;
  /** `<p>.evt.<tenant>.<session>.<type>`; an event type such as `user.message` spans two tokens. */
  evt(tenant: string, session: string, type: string): string;
  /** Every event subject of one session: `<p>.evt.<tenant>.<session>.>`. */
  sessionEvents(tenant: string, session: string): string;
  /** Reads an `evt` subject back; null for any subject `evt` could not have built under this prefix. */
  parseEvt(subject: string): EvtSubject | null;
  /**
   * A filter over every tenant's and session's events of `type`, which may end in `>` for a family
   * (`user.>`).
   */
  evtFilter(type: string): string;
  wake(tenant: string, session: string): string;
  svc(service: string, action: string): string;
  ctl(session: string): string;
  /** `<p>.delta.<tenant>.<session>`: a session's live model deltas (core NATS, never stored). */
  delta(tenant: string, session: string): string;
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
    parseEvt: (subject) => {
      const head = `${p}.evt.`;
      if (!subject.startsWith(head)) return null;
      const [tenant, session, ...type] = subject.slice(head.length).split(".");
      if (tenant === undefined || session === undefined || !TOKEN.test(tenant) || !TOKEN.test(session))
        return null;
      const joined = type.join(".");
      return TOKENS.test(joined) ? { tenant, session, type: joined } : null;
    },
    evtFilter: (type) => `${p}.evt.*.*.${checked(type, "event type filter", TYPE_FILTER)}`,
    wake: (tenant, session) =>
      `${p}.wake.${checked(tenant, "tenant", TOKEN)}.${checked(session, "session", TOKEN)}`,
    svc: (service, action) =>
      `${p}.svc.${checked(service, "service", TOKEN)}.${checked(action, "action", TOKEN)}`,
    ctl: (session) => `${p}.ctl.${checked(session, "session", TOKEN)}`,
    delta: (tenant, session) =>
      `${p}.delta.${checked(tenant, "tenant", TOKEN)}.${checked(session, "session", TOKEN)}`,
    deadLetter: (kind) => `${p}.dlq.${checked(kind, "dead-letter kind", TOKEN)}`,
    stream: (kind) => `${streamNamePrefix(p)}_${checked(kind, "stream kind", TOKEN).toUpperCase()}`,
  };
}
