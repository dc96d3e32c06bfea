import type { FakeRequestView, Turn } from "@wakeloop/fake-model";

/**
 * The fake model as a small delegating agent, so parallel sessions each get the reply their own
 * history asks for (the e2e tests and the sub-session bench drive it):
 * - "delegate: a, b, c" spawns a sub-session per item ("child: a", …);
 * - spawn results lead to one `wait_for_sessions` on those ids; its answer ends the turn, quoting it;
 * - "child: slow …" answers after 20 s (something to interrupt);
 * - "child: ask k" calls `set_state` on key k (give the agent that tool as `always_ask` to pause it) and
 *   reports "stored k" once it ran;
 * - any other "child: x" reports "done x".
 */
export function delegatingTurn(request: FakeRequestView): Turn {
  const [last] = request.toolResults.slice(-1);
  if (last?.name === "wait_for_sessions") return { text: `children said ${last.text}` };
  const spawned = request.toolResults.filter((result) => result.name === "spawn_session");
  if (spawned.length > 0) {
    const ids = spawned.map((result) => (JSON.parse(result.text) as { id: string }).id);
    return { toolCalls: [{ name: "wait_for_sessions", input: { ids } }] };
  }
  if (last?.name === "set_state") {
    return { toolCalls: [{ name: "report_result", input: { result: `stored: ${last.text}` } }] };
  }
  if (request.toolResults.length > 0) return { text: "ok" };
  if (request.lastUserText.startsWith("delegate:")) {
    const tasks = request.lastUserText.slice("delegate:".length).split(",");
    return {
      toolCalls: tasks.map((task) => ({ name: "spawn_session", input: { task: `child: ${task.trim()}` } })),
    };
  }
  if (request.lastUserText.startsWith("child: slow")) return { text: "slow answer", delayMs: 20_000 };
  if (request.lastUserText.startsWith("child: ask ")) {
    const key = request.lastUserText.slice("child: ask ".length);
    return { toolCalls: [{ name: "set_state", input: { key, value: 1 } }] };
  }
  if (request.lastUserText.startsWith("child: ")) {
    const task = request.lastUserText.slice("child: ".length);
    return { toolCalls: [{ name: "report_result", input: { result: `done ${task}` } }] };
  }
  return { text: "ok" };
}
