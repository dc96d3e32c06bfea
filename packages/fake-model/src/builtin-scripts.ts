import type { Script, Turn } from "./script";

export interface DemoScriptOptions {
  /** The tool the second step calls; the demo agent gives it `always_ask` so the session pauses. */
  approvalTool?: string;
  /** Pace of the streamed text, so a person watching sees it arrive. */
  chunkDelayMs?: number;
}

/**
 * Three steps, chosen by where the conversation stands rather than by a shared queue, so any number
 * of sessions can run the demo at once: a user message → streamed text and `set_state`; the
 * `set_state` result → a call to the approval tool; that tool's result (or denial) → a final answer.
 */
export function demoScript({ approvalTool = "deploy", chunkDelayMs = 30 }: DemoScriptOptions = {}): Script {
  return {
    defaultTurn: (request): Turn => {
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
