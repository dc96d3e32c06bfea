import type { Agent, CreateAgentRequest } from "@wakeloop/contracts";
import type { Client } from "../api";
import { ResourceList } from "../resource-list";
import { formatTime } from "../ui";

/** A starting point for a new agent; the gateway fills every other field with its default. */
const NEW_AGENT = {
  name: "my-agent",
  model: { provider: "anthropic", id: "claude-sonnet-4-5" },
  system: "You are a helpful agent.",
  tools: [{ type: "builtin" }],
};

export function AgentList({ client }: { client: Client }) {
  return (
    <ResourceList<Agent>
      title="Agents"
      noun="agent"
      template={NEW_AGENT}
      // The gateway validates the spec; its error is shown as it words it.
      create={(spec) => client.agents.create(spec as CreateAgentRequest)}
      list={(includeArchived) => client.agents.list({ limit: 200, include_archived: includeArchived })}
      pageOf={(id) => ({ page: "agent", id })}
      headers={["Version", "Model", "Updated"]}
      cells={(agent) => [
        `v${agent.version}`,
        `${agent.model.provider} / ${agent.model.id}`,
        formatTime(agent.updated_at),
      ]}
    />
  );
}
