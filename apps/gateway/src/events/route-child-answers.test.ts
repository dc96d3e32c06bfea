import type { SessionState, UserEventInput } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { routeChildAnswers } from "./route-child-answers";

const base = initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } });

function waitingOn(
  ids: readonly string[],
  kind: "tool_confirmation" | "custom_tool_result" = "tool_confirmation",
) {
  return {
    ...base,
    status: "idle",
    pending_actions: ids.map((id) => ({ event_id: id, kind, name: "shell_exec", input: {} })),
  } satisfies SessionState;
}

const confirm = (id: string, result: "allow" | "deny"): UserEventInput => ({
  type: "user.tool_confirmation",
  tool_use_id: id,
  result,
});

describe("routeChildAnswers", () => {
  it("sends an answer to the sub-session whose call awaits it; the parent's own answers stay", () => {
    const parent = waitingOn(["p1"]);
    const child = { sessionId: "c", state: waitingOn(["c1"]) };
    const routed = routeChildAnswers(parent, [child], [confirm("p1", "allow"), confirm("c1", "deny")]);
    expect(routed.own).toEqual([confirm("p1", "allow")]);
    expect(routed.children).toEqual(new Map([["c", [confirm("c1", "deny")]]]));
  });

  it("leaves with the parent an answer no sub-session awaits (the parent's check then refuses it)", () => {
    const child = { sessionId: "c", state: waitingOn(["c1"], "custom_tool_result") };
    const routed = routeChildAnswers(
      waitingOn([]),
      [child],
      [confirm("c1", "allow"), confirm("zz", "allow")],
    );
    expect(routed.own).toHaveLength(2);
    expect(routed.children.size).toBe(0);
  });

  // Invariant 4 on this path: whatever the batch, an allow reaches a session only for a call that
  // session itself awaits confirmation of, each answer reaches one session, and none is lost or made up.
  it("property: an answer goes only to the one session awaiting that exact call, or stays with the parent", () => {
    const id = fc.constantFrom("a", "b", "c", "d", "e", "f");
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { maxLength: 3 }),
        fc.array(fc.uniqueArray(id, { maxLength: 3 }), { maxLength: 3 }),
        fc.array(fc.tuple(id, fc.constantFrom("allow" as const, "deny" as const)), { maxLength: 8 }),
        (parentIds, childIds, answers) => {
          const parent = waitingOn(parentIds);
          const descendants = childIds.map((ids, index) => ({
            sessionId: `s${index}`,
            state: waitingOn(ids),
          }));
          const events = answers.map(([target, result]) => confirm(target, result));
          const routed = routeChildAnswers(parent, descendants, events);
          const sent = [...routed.children.values()].flat();
          expect(routed.own.length + sent.length).toBe(events.length);
          for (const [sessionId, list] of routed.children) {
            const child = descendants.find((candidate) => candidate.sessionId === sessionId);
            for (const event of list) {
              if (event.type !== "user.tool_confirmation") throw new Error("only confirmations are routed");
              expect(child?.state.pending_actions.map((action) => action.event_id)).toContain(
                event.tool_use_id,
              );
              expect(parentIds).not.toContain(event.tool_use_id);
            }
          }
        },
      ),
    );
  });
});
