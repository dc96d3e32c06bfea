import { type ModelConfig, WakeloopError } from "@wakeloop/contracts";
import { checkEgressUrl, type EgressPolicy, isAllowedHost } from "@wakeloop/egress";

/**
 * Where a model request may go and which key it may carry: the operator's decisions, applied when an
 * agent is saved (gateway) and again at every request (harness), from the same settings.
 */
export interface ModelEndpointPolicy {
  egress: EgressPolicy;
  /** Hosts an `anthropic`/`openai` base_url may name; they receive the platform's keys. */
  baseUrlHosts: readonly string[];
  /** `openai_compatible` hosts that receive the platform's compatible-server key. */
  compatibleKeyHosts: readonly string[];
}

/**
 * Throws unless `model` may be called at all: its base_url (if any) is http(s), names no refused
 * address literal, and, for the hosted providers, names a host the operator allowed. A hosted
 * provider's key goes wherever its base_url points, so an unlisted host is refused, not just keyless.
 */
export function checkModelEndpoint(policy: ModelEndpointPolicy, model: ModelConfig): void {
  if (model.base_url === undefined) return;
  const url = checkEgressUrl(policy.egress, model.base_url);
  if (model.provider === "openai_compatible") return;
  if (isAllowedHost({ allowedHosts: policy.baseUrlHosts }, url.hostname)) return;
  throw new WakeloopError(
    "model_base_url_refused",
    `base_url host ${url.hostname} is refused for provider ${model.provider}: only hosts on the operator's MODEL_BASE_URL_ALLOWED_HOSTS may receive the platform's ${model.provider} key; use provider openai_compatible (with a provider credential) for other servers`,
    { details: { host: url.hostname, provider: model.provider } },
  );
}

export interface ModelKeys {
  /** The tenant's own credential for the model's provider, when it stored one. */
  tenant?: string;
  /** The platform's key for the model's provider, when the operator configured one. */
  platform?: string;
}

/**
 * The key a request for `model` carries. A tenant's credential wins and goes only where the endpoint
 * rules let the model go. The platform's key goes to the hosted providers' own or allowed hosts, and
 * to an `openai_compatible` host only when the operator listed it; any other host gets no key.
 */
export function modelApiKey(
  policy: ModelEndpointPolicy,
  model: ModelConfig,
  keys: ModelKeys,
): string | undefined {
  checkModelEndpoint(policy, model);
  if (keys.tenant !== undefined) return keys.tenant;
  if (model.provider !== "openai_compatible") return keys.platform;
  if (model.base_url === undefined) return undefined;
  const host = new URL(model.base_url).hostname;
  return isAllowedHost({ allowedHosts: policy.compatibleKeyHosts }, host) ? keys.platform : undefined;
}
