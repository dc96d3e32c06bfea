import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { WakeloopError } from "@wakeloop/contracts";
import { ruleTag, sandboxBridgeRules, taggedRule } from "./firewall-rules";

const run = promisify(execFile);
const CHAINS = ["DOCKER-USER", "INPUT"] as const;

/**
 * The host packet filter around this runner's sandbox bridges (iptables, on the Docker host, as root).
 * Rules carry the runner's tag, so installing is idempotent (the bridge's old rules go first) and a
 * restarted runner removes the rules of bridges it no longer has.
 */
export class SandboxFirewall {
  constructor(
    private readonly runnerId: string,
    private readonly dnsServers: readonly string[],
  ) {}

  /** Fails start-up, not the first bridge sandbox, when iptables or Docker's DOCKER-USER chain is missing. */
  async check(): Promise<void> {
    await this.iptables(["-S", "DOCKER-USER"]);
  }

  async install(bridge: string): Promise<void> {
    await this.remove(bridge);
    const rules = sandboxBridgeRules(bridge, ruleTag(this.runnerId, bridge), this.dnsServers);
    // Each insert goes to the top of its chain, so inserting in reverse keeps the rules' order.
    for (const rule of [...rules].reverse()) await this.iptables(["-I", rule.chain, ...rule.args]);
  }

  /**
   * Installs the bridge's rules unless they are all there: a restarted runner calls it for the
   * networks it keeps, and re-installing in place would leave a running sandbox unfenced for a moment.
   * (`iptables -S` reorders a rule's matches, so rules are counted per chain, not compared.)
   */
  async ensure(bridge: string): Promise<void> {
    const expected = sandboxBridgeRules(bridge, ruleTag(this.runnerId, bridge), this.dnsServers);
    for (const chain of CHAINS) {
      const present = (await this.tagged(chain)).filter((rule) => rule.bridge === bridge).length;
      if (present !== expected.filter((rule) => rule.chain === chain).length) return this.install(bridge);
    }
  }

  async remove(bridge: string): Promise<void> {
    await this.removeWhere((tagged) => tagged === bridge);
  }

  /** After a restart: the rules of every bridge of this runner that is not in `keep`. */
  async removeAllExcept(keep: ReadonlySet<string>): Promise<void> {
    await this.removeWhere((bridge) => !keep.has(bridge));
  }

  private async removeWhere(match: (bridge: string) => boolean): Promise<void> {
    for (const chain of CHAINS) {
      for (const rule of await this.tagged(chain)) {
        if (match(rule.bridge)) await this.iptables(["-D", rule.chain, ...rule.args]);
      }
    }
  }

  /** This runner's rules in `chain`. */
  private async tagged(chain: string) {
    const { stdout } = await this.iptables(["-S", chain]);
    return stdout.split("\n").flatMap((line) => taggedRule(line, this.runnerId) ?? []);
  }

  private async iptables(args: string[]): Promise<{ stdout: string }> {
    try {
      // -w waits for the xtables lock: other runners and dockerd change the same tables.
      return await run("iptables", ["-w", ...args]);
    } catch (error) {
      throw new WakeloopError(
        "sandbox_firewall_failed",
        `iptables ${args.slice(0, 2).join(" ")} failed: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`,
        { cause: error, retryable: true },
      );
    }
  }
}
