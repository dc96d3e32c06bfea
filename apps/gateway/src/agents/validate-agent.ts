import type { AgentSpec } from "@wakeloop/contracts";
import { checkModelEndpoint, type ModelEndpointPolicy } from "@wakeloop/model-providers";
import { validateAgentTools } from "../tools/validate-tool-config";

/**
 * Save-time checks of an agent spec: its tool configuration, and its model endpoint under the same
 * rules the harness applies at request time (a refused base_url is a 400 naming the rule).
 */
export function agentValidator(models: ModelEndpointPolicy): (spec: AgentSpec) => void {
  return (spec) => {
    validateAgentTools(spec);
    checkModelEndpoint(models, spec.model);
  };
}
