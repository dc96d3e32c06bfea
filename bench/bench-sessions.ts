import type { Platform } from "@wakeloop/testing";
import { sql } from "kysely";

/** Helpers every scenario drives the platform with, through its public API as a client would. */

/** Which of the fake model's wire protocols the bench's agents speak. */
export type BenchProvider = "openai_compatible" | "anthropic";

/** `count` sessions of one new agent (the agent's tool policy is the default: state tools included). */
export async function newSessions(
  platform: Platform,
  count: number,
  provider: BenchProvider = "openai_compatible",
): Promise<string[]> {
  const model = platform.fakeModel(provider);
  const agent = await platform.request("POST", "/v1/agents", { name: "bench", model });
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    ids.push((await platform.request("POST", "/v1/sessions", { agent: agent.body.id })).body.id);
  }
  return ids;
}

/**
 * Sends a user message as a client does: a 503 ("retry later": Postgres, shared on the bench machine,
 * had no connection to give within the gateway's wait) is sent again after a pause, up to 10 times.
 */
export async function say(platform: Platform, sessionId: string, text: string): Promise<void> {
  const body = { events: [{ type: "user.message", content: [{ type: "text", text }] }] };
  for (let attempt = 1; ; attempt++) {
    const sent = await platform.request("POST", `/v1/sessions/${sessionId}/events`, body);
    if (sent.status === 202) return;
    if (sent.status !== 503 || attempt === 10)
      throw new Error(`message refused: ${sent.status} ${JSON.stringify(sent.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}

/** Resolves once every session's turn has ended (idle with `end_turn`). */
export async function waitForIdleWakes(
  platform: Platform,
  sessions: readonly string[],
  timeoutMs: number,
  pollMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await platform.db
      .selectFrom("sessions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("id", "in", sessions)
      .where(sql<boolean>`(state->'stop_reason'->>'type') is distinct from 'end_turn'`)
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${open.n} sessions still busy`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Settings of every bench platform: one tenant stands for the many a deployment serves, so its
 * fairness limits (wakes in flight per tenant, API requests per key) are lifted; the scenarios measure
 * the platform, not those limits.
 */
export const BENCH_APP_ENV = {
  orchestrator: { WAKES_IN_FLIGHT_PER_TENANT: "100000" },
  gateway: { GATEWAY_RATE_LIMIT_REQUESTS: "0", WAKES_IN_FLIGHT_PER_TENANT: "100000" },
};
