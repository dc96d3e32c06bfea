import type { CreateEnvironmentRequest, Environment } from "@wakeloop/contracts";
import type { Client } from "../api";
import { ResourceList } from "../resource-list";
import { formatTime } from "../ui";

/** A starting point: the gateway fills the sandbox settings (image, limits, exec policy) with defaults. */
const NEW_ENVIRONMENT = { name: "my-environment", config: { network: "none", exec_ask: "on-miss" } };

export function EnvironmentList({ client }: { client: Client }) {
  return (
    <ResourceList<Environment>
      title="Environments"
      noun="environment"
      template={NEW_ENVIRONMENT}
      // The gateway validates the spec; its error is shown as it words it.
      create={(spec) => client.environments.create(spec as CreateEnvironmentRequest)}
      list={(includeArchived) => client.environments.list({ limit: 200, include_archived: includeArchived })}
      pageOf={(id) => ({ page: "environment", id })}
      headers={["Image", "Network", "Exec", "Updated"]}
      cells={(environment) => [
        environment.config.image,
        environment.config.network,
        `${environment.config.exec_security} / ask ${environment.config.exec_ask}`,
        formatTime(environment.updated_at),
      ]}
    />
  );
}
