/**
 * Span attribute names. The GenAI ones follow the OpenTelemetry GenAI semantic conventions so any
 * OTLP backend renders our wakes as agent traces; the `wakeloop.*` ones carry our own ids. They are
 * spelled out here rather than imported from `@opentelemetry/semantic-conventions/incubating`, whose
 * names may change between releases while these are part of what we store in Postgres.
 */

export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
/** The session id: a session is the GenAI "conversation". */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
/** Input tokens served from the provider's prompt cache; part of `gen_ai.usage.input_tokens`. */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens";
/** Input tokens written to the provider's prompt cache; part of `gen_ai.usage.input_tokens`. */
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens";
/** A model request's cost at the operator's prices, in micro-USD; absent when its model has no price. */
export const ATTR_WAKELOOP_COST_MICRO_USD = "wakeloop.cost.micro_usd";
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name";

/** Values of `gen_ai.operation.name` for the spans a wake produces (DESIGN §9). */
export const GenAiOperation = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
} as const;

export const ATTR_WAKELOOP_TENANT_ID = "wakeloop.tenant.id";
/** For spans outside a GenAI operation (sandbox, memory); `gen_ai.conversation.id` wins when both are set. */
export const ATTR_WAKELOOP_SESSION_ID = "wakeloop.session.id";
export const ATTR_WAKELOOP_WAKE_ID = "wakeloop.wake.id";
