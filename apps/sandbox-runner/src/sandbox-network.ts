import { randomBytes } from "node:crypto";
import { WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { LABEL } from "./labels";
import type { SandboxFirewall } from "./sandbox-firewall";

const NAME_PREFIX = "wl-net-";

/** Linux names a bridge in at most 15 characters; the network's random part fits behind `wl`. */
export function bridgeOf(network: string): string {
  return `wl${network.slice(NAME_PREFIX.length)}`;
}

/**
 * One Docker network per sandbox that may reach the network, never Docker's default bridge: no other
 * container shares it (and inter-container traffic is off anyway), and the firewall drops everything
 * it sends to non-public ranges or to the host. The rules are in place before any container joins.
 */
export class SandboxNetworks {
  constructor(
    private readonly docker: Docker,
    private readonly runnerId: string,
    private readonly firewall: SandboxFirewall,
  ) {}

  async create(labels: Record<string, string>): Promise<string> {
    const name = `${NAME_PREFIX}${randomBytes(6).toString("hex")}`;
    const bridge = bridgeOf(name);
    try {
      await this.docker.createNetwork({
        Name: name,
        Driver: "bridge",
        CheckDuplicate: true,
        EnableIPv6: false,
        Labels: { ...labels, [LABEL.runner]: this.runnerId, [LABEL.kind]: "network" },
        Options: {
          "com.docker.network.bridge.name": bridge,
          "com.docker.network.bridge.enable_icc": "false",
          "com.docker.network.bridge.enable_ip_masquerade": "true",
        },
      });
    } catch (error) {
      throw new WakeloopError(
        "sandbox_network_failed",
        `could not create the sandbox network: ${(error as Error).message}`,
        { cause: error, retryable: true },
      );
    }
    try {
      await this.firewall.install(bridge);
    } catch (error) {
      await this.remove(name).catch(() => undefined);
      throw error;
    }
    return name;
  }

  /** The network goes first: Docker refuses while a container is still on it, and then the rules stay. */
  async remove(name: string): Promise<void> {
    try {
      await this.docker.getNetwork(name).remove();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    await this.firewall.remove(bridgeOf(name));
  }

  /**
   * After a restart: networks (and rules) of this runner that no kept container uses are removed, and
   * the kept ones get their rules again, because a host reboot empties the kernel's tables while
   * Docker keeps the networks and restarts nothing into them but what this runner starts.
   */
  async reconcile(keep: ReadonlySet<string>): Promise<void> {
    const filters = JSON.stringify({ label: [`${LABEL.runner}=${this.runnerId}`, `${LABEL.kind}=network`] });
    const kept = new Set<string>();
    for (const network of await this.docker.listNetworks({ filters })) {
      if (!keep.has(network.Name)) await this.remove(network.Name);
      else kept.add(bridgeOf(network.Name));
    }
    await this.firewall.removeAllExcept(kept);
    for (const bridge of kept) await this.firewall.ensure(bridge);
  }
}
