import { AgentSpec, type ModelProvider } from "@wakeloop/contracts";
import {
  type EffectiveTool,
  offeredTools,
  type PlatformToolSettings,
  providerTools,
  type SessionToolInputs,
  sessionEffectiveTools,
  TOOL_SEARCH,
} from "@wakeloop/tool-runtime";
import type { ChatCompletionFunctionDefinition } from "gpt-tokenizer/functionCalling";
import { countChatCompletionTokens } from "gpt-tokenizer/model/gpt-4o";
import { toAnthropicParams } from "../packages/model-providers/src/anthropic-request";
import type { ModelRequest } from "../packages/model-providers/src/model-client";
import { toOpenAIParams } from "../packages/model-providers/src/openai-request";

/*
 * Issue #29 item 1: the input tokens of a one-line first turn ("hello") for an agent created with the
 * built-in toolset and no other tool configuration, before (every tool it may call is offered, as the
 * platform did) and after (the core and tool_search; docs/tool-search.md). The tools come from the
 * functions the harness builds its requests with (sessionEffectiveTools → offeredTools → providerTools).
 * Counted without a network:
 * - OpenAI: gpt-tokenizer's countChatCompletionTokens for gpt-4o (o200k_base, with OpenAI's rendering of
 *   function definitions and per-message overhead), over the request's messages and tools.
 * - Anthropic: no public tokenizer for current Claude models, so bytes / 4 of the request's prompt
 *   material (system, messages and tools as JSON, the way the body carries them).
 * Two situations: a session without an environment (no sandbox: the console's 82 tools of the issue)
 * and one whose sandbox is ready with web search configured (the most tools a default agent gets).
 */

const SYSTEM = "You are a helpful assistant.";
const FIRST_TURN = "hello";
export const FIRST_TURN_TARGET = 2_500;

export interface FirstTurnTokens {
  situation: string;
  provider: ModelProvider;
  counting: string;
  before: { tools: number; inputTokens: number };
  after: { tools: number; inputTokens: number };
}

const settings = (webSearch: boolean): PlatformToolSettings => ({
  globalToolPolicy: {},
  maxSubSessionDepth: 2,
  webSearch,
  maxChildrenPerSession: 10,
  browserImages: [],
});

const situations = [
  { name: "no sandbox", sandbox: false },
  { name: "sandbox ready, web search on", sandbox: true },
] as const;

export function runToolSearchBench(): FirstTurnTokens[] {
  const rows: FirstTurnTokens[] = [];
  for (const provider of ["openai", "anthropic"] as const) {
    const agent = AgentSpec.parse({
      name: "default",
      model: { provider, id: provider === "openai" ? "gpt-4o" : "claude-sonnet" },
      system: SYSTEM,
      tools: [{ type: "builtin" }],
    });
    for (const situation of situations) {
      const inputs: SessionToolInputs = {
        agent,
        environmentPolicy: null,
        environmentMcpServers: [],
        mcpListings: [],
        depth: 0,
        childCount: 0,
        sandboxStatus: situation.sandbox ? "ready" : null,
        sandboxImage: situation.sandbox ? "wakeloop-sandbox:bookworm" : null,
        memoryReady: true,
        agentTools: [],
        revealedTools: [],
      };
      const set = sessionEffectiveTools(inputs, settings(situation.sandbox));
      // Before: the request carried every tool the session may call (tool_search did not exist).
      const everything = set.tools.filter((tool) => tool.name !== TOOL_SEARCH);
      const after = offeredTools(set);
      rows.push({
        situation: situation.name,
        provider,
        counting:
          provider === "openai"
            ? "gpt-tokenizer countChatCompletionTokens (gpt-4o, o200k_base)"
            : "bytes / 4 of system, messages and tools JSON (no public Claude tokenizer)",
        before: { tools: everything.length, inputTokens: firstTurnTokens(provider, everything) },
        after: { tools: after.length, inputTokens: firstTurnTokens(provider, after) },
      });
    }
  }
  return rows;
}

function firstTurnTokens(provider: ModelProvider, tools: readonly EffectiveTool[]): number {
  const request: ModelRequest = {
    model: "bench",
    system: SYSTEM,
    messages: [{ role: "user", content: [{ type: "text", text: FIRST_TURN }] }],
    tools: providerTools(tools, provider),
    maxOutputTokens: 4_096,
  };
  if (provider === "anthropic") {
    const { system, messages, tools: wire } = toAnthropicParams(request);
    return Math.ceil(Buffer.byteLength(JSON.stringify({ system, messages, tools: wire })) / 4);
  }
  const params = toOpenAIParams(request, "max_completion_tokens");
  if (countChatCompletionTokens === undefined)
    throw new Error("gpt-tokenizer: gpt-4o has no function calling");
  return countChatCompletionTokens({
    messages: params.messages.map((message) => ({
      role: message.role,
      content: typeof message.content === "string" ? message.content : JSON.stringify(message.content),
    })),
    functions: (params.tools ?? []).flatMap((tool) =>
      tool.type === "function" ? [tool.function as ChatCompletionFunctionDefinition] : [],
    ),
  });
}
