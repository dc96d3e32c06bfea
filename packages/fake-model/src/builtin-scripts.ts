import type { FakeRequestView } from "./request-view";
import type { Script, Turn } from "./script";

export interface DemoScriptOptions {
  /** The tool the second step calls; the demo agent gives it `always_ask` so the session pauses. */
  approvalTool?: string;
  /** Pace of the streamed text, so a person watching sees it arrive. */
  chunkDelayMs?: number;
}

/**
 * The demo agent's script, for requests that offer its approval tool: three steps, chosen by where the
 * conversation stands rather than by a shared queue, so any number of sessions can run the demo at
 * once: a user message → streamed text and `set_state`; the `set_state` result → a call to the approval
 * tool; that tool's result (or denial) → a final answer. Any other agent gets `plainTurn`.
 */
export function demoScript({ approvalTool = "deploy", chunkDelayMs = 30 }: DemoScriptOptions = {}): Script {
  return {
    defaultTurn: (request): Turn => {
      if (!request.toolNames.includes(approvalTool)) return { ...plainTurn(request), chunkDelayMs };
      const last = request.toolResults.at(-1);
      if (last === undefined) {
        return {
          text: "Sure. I'll note what you asked, then run the step that needs your approval.",
          toolCalls: [{ name: "set_state", input: { key: "last_request", value: request.lastUserText } }],
          chunkDelayMs,
        };
      }
      if (last.name === "set_state") {
        return { toolCalls: [{ name: approvalTool, input: { target: "staging" } }], chunkDelayMs };
      }
      const outcome = last.isError ? "was not carried out" : "is done";
      return { text: `The ${approvalTool} step ${outcome}: ${last.text}`, chunkDelayMs };
    },
  };
}

/** `/tool NAME` or `/tool NAME {json input}`: the documented way to make the fake model call a tool. */
const TOOL_COMMAND = /^\/tool\s+([a-z][a-z0-9_]*)\s*(\{[\s\S]*\})?\s*$/;

/**
 * What the local fake model says to an agent it has no script for: a deterministic reply that says
 * what it is, a tool call only when the user asks for one with `/tool NAME {input}`, and after that
 * call the tool's result in words.
 */
export function plainTurn(request: FakeRequestView): Turn {
  const last = request.toolResults.at(-1);
  if (last !== undefined) {
    // OpenAI-shaped histories carry a failure as text starting "Error:" (request-view.ts); say it once.
    const text = last.isError ? last.text.replace(/^Error:\s*/, "") : last.text;
    return { text: `${last.name ?? "The tool"} ${last.isError ? "failed" : "returned"}: ${text}` };
  }
  const command = TOOL_COMMAND.exec(request.lastUserText.trim());
  if (command === null) {
    return {
      text:
        `You said: "${request.lastUserText}". This is Wakeloop's local fake model: it answers every ` +
        'message like this. Send /tool NAME {"some":"input"} to make it call one of the agent\'s tools.',
    };
  }
  const [, name = "", json] = command;
  let input: Record<string, unknown> = {};
  try {
    const parsed: unknown = json === undefined ? {} : JSON.parse(json);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    input = parsed as Record<string, unknown>;
  } catch {
    return { text: `The input after /tool ${name} is not a JSON object: ${json}` };
  }
  if (!request.toolNames.includes(name)) {
    return {
      text: `This agent is not offered a tool named ${name}. It is offered: ${request.toolNames.join(", ")}.`,
    };
  }
  return { text: `Calling ${name}.`, toolCalls: [{ name, input }] };
}

/** Answers every request with the latest user text. */
export function echoScript(): Script {
  return {
    defaultTurn: (request) => ({ text: request.lastUserText.length > 0 ? request.lastUserText : "ok" }),
  };
}

export const builtinScripts = {
  demo: demoScript,
  echo: echoScript,
} as const satisfies Record<string, (options: DemoScriptOptions) => Script>;

export type BuiltinScriptName = keyof typeof builtinScripts;

export function isBuiltinScriptName(name: string): name is BuiltinScriptName {
  return Object.hasOwn(builtinScripts, name);
}
