import { type AgentSpec, WakeloopError } from "@wakeloop/contracts";
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
    checkContextManagement(spec);
  };
}

/**
 * A compaction threshold must leave the answer its room in the model's window (past it the oldest
 * turns would be dropped before compaction ran), and what is kept must be less than the threshold.
 */
function checkContextManagement({ context_management: management, model }: AgentSpec): void {
  if (management === undefined) return;
  const input = model.context_window_tokens - model.max_output_tokens;
  if (management.threshold_tokens > input) {
    throw new WakeloopError(
      "invalid_request",
      `context_management.threshold_tokens (${management.threshold_tokens}) must be at most the model's context_window_tokens minus max_output_tokens (${input})`,
    );
  }
  if (management.keep_recent_tokens >= management.threshold_tokens) {
    throw new WakeloopError(
      "invalid_request",
      `context_management.keep_recent_tokens (${management.keep_recent_tokens}) must be less than threshold_tokens (${management.threshold_tokens})`,
    );
  }
}
