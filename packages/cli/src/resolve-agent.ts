import type { Agent } from "@wakeloop/contracts";
import { WakeloopApiError, type WakeloopClient } from "@wakeloop/sdk";
import { CliError, ExitCode } from "./errors";

/** An agent by id, or else by name among the tenant's agents; a name two agents share is refused. */
export async function resolveAgent(client: WakeloopClient, ref: string): Promise<Agent> {
  try {
    return await client.agents.get(ref);
  } catch (error) {
    if (!(error instanceof WakeloopApiError) || error.status !== 404) throw error;
  }
  const named: Agent[] = [];
  for (let after: string | null | undefined; after !== null; ) {
    const page = await client.agents.list({ limit: 200, ...(after && { after_id: after }) });
    named.push(...page.data.filter((agent) => agent.name === ref));
    after = page.next_after_id;
  }
  const [only, ...others] = named;
  if (only === undefined) {
    throw new CliError(
      `no agent with the id or name "${ref}" (see \`wakeloop agents list\`)`,
      ExitCode.notFound,
    );
  }
  if (others.length > 0) {
    const ids = named.map((agent) => agent.id).join(", ");
    throw new CliError(
      `${named.length} agents are named "${ref}": give one of their ids (${ids})`,
      ExitCode.usage,
    );
  }
  return only;
}
