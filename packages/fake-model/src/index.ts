export {
  type BuiltinScriptName,
  builtinScripts,
  type DemoScriptOptions,
  demoScript,
  echoScript,
} from "./builtin-scripts";
export { FAKE_EMBEDDING_DIMENSIONS, fakeEmbedding } from "./embeddings-protocol";
export type { AnthropicCacheOptions } from "./prompt-cache";
export { estimateTokens } from "./reply-plan";
export {
  type FakeRequestView,
  type FakeToolResult,
  SUMMARY_REQUEST_MARKER,
  type WireProtocol,
} from "./request-view";
export {
  type DefaultTurn,
  type ErrorTurn,
  type Script,
  ScriptFile,
  type ScriptToolCall,
  type ScriptUsage,
  type TextTurn,
  type ToolCallTurn,
  type Turn,
} from "./script";
export {
  type FakeModelServer,
  type FakeModelServerOptions,
  type RecordedRequest,
  startFakeModelServer,
} from "./server";
