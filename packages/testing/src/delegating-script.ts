import type { FakeRequestView, Turn } from "@wakeloop/fake-model";

/** Token counts the script reports, so tests of budgets know what each request cost. */
export const DELEGATING_USAGE = {
  spawn: { input_tokens: 1_000, output_tokens: 0 },
  turn: { input_tokens: 100, output_tokens: 10 },
  burn: { input_tokens: 5_000, output_tokens: 0 },
} as const;

/**
 * The fake model as a small delegating agent, so parallel sessions each get the reply their own
 * history asks for (the e2e tests and the sub-session bench drive it):
 * - "delegate: a, b, c" spawns a sub-session per item ("child: a", …); an item "a@500#m" asks for
 *   `token_limit` 500 and `model` m (both optional). The spawning request costs `DELEGATING_USAGE.spawn`,
 *   every other one `DELEGATING_USAGE.turn`;
 * - spawn results lead to one `wait_for_sessions` on the ids spawned (refused spawns left out); its
 *   answer ends the turn, quoting it;
 * - "child: slow …" answers after 20 s (something to interrupt);
 * - "child: ask k" calls `set_state` on key k (give the agent that tool as `always_ask` to pause it) and
 *   reports "stored k" once it ran;
 * - "child: burn" calls `set_state` in a request that costs `DELEGATING_USAGE.burn` (past a small budget);
 * - "child: which model" reports the model its requests go to ("model <id>");
 * - "child: chat" ends its turn without reporting ("listening"); a later "report now" makes it report
 *   "reported after steering";
 * - any other "child: x" reports "done x".
 */
export function delegatingTurn(request: FakeRequestView): Turn {
  return { usage: DELEGATING_USAGE.turn, ...delegatingReply(request) };
}

function delegatingReply(request: FakeRequestView): Turn {
  const [last] = request.toolResults.slice(-1);
  if (last?.name === "wait_for_sessions") return { text: `children said ${last.text}` };
  const spawned = request.toolResults.filter((result) => result.name === "spawn_session");
  if (spawned.length > 0) {
    const ids = spawned
      .filter((result) => !result.isError)
      .map((result) => (JSON.parse(result.text) as { id: string }).id);
    if (ids.length === 0) return { text: "no sub-session could start" };
    return { toolCalls: [{ name: "wait_for_sessions", input: { ids } }] };
  }
  if (last?.name === "set_state") {
    return { toolCalls: [{ name: "report_result", input: { result: `stored: ${last.text}` } }] };
  }
  if (request.toolResults.length > 0) return { text: "ok" };
  if (request.lastUserText.startsWith("delegate:")) {
    const items = request.lastUserText.slice("delegate:".length).split(",");
    return { toolCalls: items.map(spawnCall), usage: DELEGATING_USAGE.spawn };
  }
  if (request.lastUserText.startsWith("child: slow")) return { text: "slow answer", delayMs: 20_000 };
  if (request.lastUserText.startsWith("child: ask ")) {
    const key = request.lastUserText.slice("child: ask ".length);
    return { toolCalls: [{ name: "set_state", input: { key, value: 1 } }] };
  }
  if (request.lastUserText === "child: burn") {
    return {
      toolCalls: [{ name: "set_state", input: { key: "burn", value: 1 } }],
      usage: DELEGATING_USAGE.burn,
    };
  }
  if (request.lastUserText === "child: chat") return { text: "listening" };
  if (request.lastUserText === "report now") {
    return { toolCalls: [{ name: "report_result", input: { result: "reported after steering" } }] };
  }
  if (request.lastUserText === "child: which model") {
    return { toolCalls: [{ name: "report_result", input: { result: `model ${request.model}` } }] };
  }
  if (request.lastUserText.startsWith("child: ")) {
    const task = request.lastUserText.slice("child: ".length);
    return { toolCalls: [{ name: "report_result", input: { result: `done ${task}` } }] };
  }
  return { text: "ok" };
}

/** "a@500#m": a spawn of "child: a" with token_limit 500 and model m. */
function spawnCall(item: string) {
  const [, task = "", limit, model] = /^(.*?)(?:@(\d+))?(?:#(\S+))?$/.exec(item.trim()) ?? [];
  return {
    name: "spawn_session",
    input: {
      task: `child: ${task.trim()}`,
      ...(limit !== undefined && { token_limit: Number(limit) }),
      ...(model !== undefined && { model }),
    },
  };
}
