import { lookup } from "node:dns/promises";
import { Agent, buildConnector } from "undici";
import { isIpLiteral } from "./address-class";
import { EgressError } from "./egress-error";
import { checkAddress, type EgressPolicy, normalizeHost } from "./egress-policy";

/** Every address a host name resolves to. Injected in tests; the system resolver otherwise. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

export const resolveWithSystem: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

export interface GuardedDispatcherOptions {
  policy: EgressPolicy;
  resolve?: ResolveHost;
  /** TCP + TLS handshake; undici's default is 10 s. */
  connectTimeoutMs?: number;
}

/**
 * The address a connection to `host` will use. Every resolved address must pass, not only the one
 * used: a name that mixes public and internal records is refused rather than raced.
 */
export async function resolveAllowedAddress(
  policy: EgressPolicy,
  host: string,
  resolve: ResolveHost,
): Promise<string> {
  const bare = normalizeHost(host);
  if (isIpLiteral(bare)) {
    checkAddress(policy, bare, bare);
    return bare;
  }
  const addresses = await resolve(bare);
  const [first] = addresses;
  if (first === undefined) throw new EgressError("egress_refused", `${bare} has no address`, { host: bare });
  for (const address of addresses) checkAddress(policy, bare, address);
  return first;
}

/**
 * An undici dispatcher whose every new connection is checked: the host is resolved once, each address
 * is checked, and the socket connects to the checked address itself. Nothing resolves the name again
 * between check and connect, so DNS rebinding cannot swap in an internal address. TLS still verifies
 * the certificate against the name (undici takes the SNI name from the original host).
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  const connect = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  const resolve = options.resolve ?? resolveWithSystem;
  return new Agent({
    connect(connectOptions, callback) {
      resolveAllowedAddress(options.policy, connectOptions.hostname, resolve).then(
        (address) => connect({ ...connectOptions, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}
