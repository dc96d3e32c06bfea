export { type AnthropicClientOptions, createAnthropicClient } from "./anthropic-client";
export { createModelClient, type ModelCredentials } from "./create-model-client";
export {
  type BackoffOptions,
  ModelError,
  type ModelErrorCode,
  type ModelErrorDetails,
  retryDelayMs,
} from "./errors";
export type {
  ModelAssistantPart,
  ModelCallOptions,
  ModelClient,
  ModelDelta,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelStopReason,
  ModelStreamEvent,
  ModelToolCall,
  ModelToolCallPart,
  ModelToolResult,
  ModelToolSpec,
  PromptCache,
} from "./model-client";
export {
  checkModelEndpoint,
  type ModelEndpointPolicy,
  type ModelKeys,
  modelApiKey,
} from "./model-endpoint";
export { defineModelClient } from "./model-stream";
export { createOpenAIClient, type OpenAIClientOptions } from "./openai-client";
export type { MaxTokensField } from "./openai-request";
