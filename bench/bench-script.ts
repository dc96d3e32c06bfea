import type { Script } from "@wakeloop/fake-model";

/*
 * What the fake model answers in every scenario. `steps:K` (or `steps:K:<tag>`) makes the model call
 * the built-in state tool `set_state` K times, then answer; anything else is answered at once. The
 * tool is a real durable write (an upsert of the agent's state in its own transaction, executed inline
 * by the harness), so a step measures the platform: Postgres commits, JetStream hops, the harness.
 * The tag keeps each session's keys apart: state is per agent, and sessions sharing one agent and one
 * key would queue on that row's lock instead of measuring the platform.
 */

const STEPS = /^steps:(\d+)(?::([A-Za-z0-9_]+))?$/;
const usage = { input_tokens: 10, output_tokens: 2 };

/** The user message that asks for `steps` tool steps under the session's own `tag`. */
export const stepsMessage = (steps: number, tag: string) => `steps:${steps}:${tag}`;

/** `latencyMs`: how long the model takes to answer each request (a timer: no CPU is held meanwhile). */
export function benchScript(options: { latencyMs?: number } = {}): Script {
  const delayMs = options.latencyMs ?? 0;
  return {
    defaultTurn: (request) => {
      const steps = STEPS.exec(request.lastUserText);
      if (!steps) return { text: "ok", usage, delayMs };
      const done = Number(/step_(\d+)/.exec(request.toolResults.at(-1)?.text ?? "")?.[1] ?? 0);
      if (done >= Number(steps[1])) return { text: "done", usage, delayMs };
      const key = `bench/${steps[2] ?? "default"}/step_${done + 1}`;
      return { toolCalls: [{ name: "set_state", input: { key, value: { n: done + 1 } } }], usage, delayMs };
    },
  };
}
