import { exceedsJsonDepth, type JsonSchemaObject, jsonDepthMessage } from "@wakeloop/contracts";
import { checkValue, LlmGenerateInput, schemaProblem } from "@wakeloop/tool-runtime";
import { callModel } from "../model/call-model";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * llm_generate: one model call without tools or history, at the agent's provider with the model the
 * operator mapped to the intelligence level (the agent's own model when none is). It is a `chat`
 * span under the call's `execute_tool` span, and its usage comes back on the outcome so the step
 * records it as the session's usage, against the session's budget — also when the answer is refused.
 */
export async function runLlmGenerate(ctx: ToolContext, input: Record<string, unknown>): Promise<ToolOutcome> {
  const { prompt, system, intelligence, schema, max_tokens } = LlmGenerateInput.parse(input);
  const problem = schema === undefined ? null : schemaProblem(schema, { object: false });
  if (problem !== null) return errorOutcome(`schema is not a usable JSON Schema: ${problem}`);
  const agentModel = ctx.view.agent.model;
  const model = ctx.settings.llmModels[intelligence] ?? agentModel.id;
  let client: Awaited<ReturnType<ToolContext["models"]>>;
  try {
    client = await ctx.models(ctx.view.tenantId, { ...agentModel, id: model });
  } catch (error) {
    return errorOutcome(`llm_generate cannot reach model ${model}: ${(error as Error).message}`);
  }
  const response = await callModel(
    ctx.tracer,
    client,
    {
      model,
      system: schema === undefined ? (system ?? "") : withSchema(system, schema),
      messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
      tools: [],
      maxOutputTokens: max_tokens,
    },
    {
      signal: ctx.signal,
      retry: ctx.settings.retry,
      metrics: ctx.metrics,
      hooks: { onRetry: async () => {} },
    },
  );
  const usage = { input_tokens: response.usage.input_tokens, output_tokens: response.usage.output_tokens };
  const result = { text: response.text, model, intelligence, usage };
  const spent = { usage: { provider: client.provider, model, usage: response.usage } };
  if (schema === undefined) return { ...jsonOutcome(result), ...spent };
  const parsed = parseAnswer(response.text, schema);
  if (!parsed.ok) return { ...errorOutcome(parsed.message), ...spent };
  return { ...jsonOutcome({ ...result, parsed: parsed.value }), ...spent };
}

// The providers' structured-output modes differ (and the model-providers port has none yet), so the
// schema is asked for in the system prompt and the answer is checked here.
function withSchema(system: string | undefined, schema: JsonSchemaObject): string {
  const instruction = `Answer with only a JSON value, no prose and no code fence, that matches this JSON Schema:\n${JSON.stringify(schema)}`;
  return system === undefined || system === "" ? instruction : `${system}\n\n${instruction}`;
}

function parseAnswer(
  text: string,
  schema: JsonSchemaObject,
): { ok: true; value: unknown } | { ok: false; message: string } {
  const bare = text
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  let value: unknown;
  try {
    value = JSON.parse(bare);
  } catch {
    return { ok: false, message: `the model's answer is not JSON: ${text.slice(0, 500)}` };
  }
  if (exceedsJsonDepth(value)) return { ok: false, message: jsonDepthMessage("the model's answer") };
  const check = checkValue(schema, value, "answer");
  return check.ok
    ? { ok: true, value }
    : { ok: false, message: `the model's answer does not match the schema: ${check.message}` };
}
