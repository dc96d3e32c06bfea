import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxExecuteCompleted } from "@wakeloop/contracts";
import { WakeloopError } from "@wakeloop/contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CallJournal } from "./call-journal";

let dir: string;
const journal = () => new CallJournal((sessionId) => join(dir, sessionId));
const result = (text: string): SandboxExecuteCompleted => ({
  outcome: "completed",
  tool_call_id: "tcall_1",
  is_error: false,
  content: [{ type: "text", text }],
  result: {},
  replayed: false,
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "wl-journal-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("CallJournal", () => {
  it("runs a call id once and replays the recorded result, also from a new instance", async () => {
    let runs = 0;
    const execute = async () => {
      runs += 1;
      return result(`run ${runs}`);
    };
    expect(await journal().once("s1", "tcall_1", execute)).toMatchObject({
      replayed: false,
      content: [{ text: "run 1" }],
    });
    expect(await journal().once("s1", "tcall_1", execute)).toMatchObject({
      replayed: true,
      content: [{ text: "run 1" }],
    });
    expect(runs).toBe(1);
  });

  it("shares one execution between concurrent duplicates", async () => {
    const j = journal();
    let runs = 0;
    const slow = async () => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return result("once");
    };
    const [first, second] = await Promise.all([j.once("s1", "tcall_2", slow), j.once("s1", "tcall_2", slow)]);
    expect(runs).toBe(1);
    expect(first.replayed).toBe(false);
    expect(second.replayed).toBe(true);
  });

  it("keeps no record when nothing ran (needs approval), so the id can run later", async () => {
    const j = journal();
    expect(await j.once("s1", "tcall_3", async () => null)).toBeNull();
    expect(await j.once("s1", "tcall_3", async () => result("approved"))).toMatchObject({ replayed: false });
  });

  it("reports an unknown outcome for a call that started but never recorded a result", async () => {
    const crashed = journal();
    void crashed.once("s1", "tcall_4", () => new Promise<SandboxExecuteCompleted>(() => {}));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const restarted = journal();
    await expect(restarted.once("s1", "tcall_4", async () => result("again"))).rejects.toMatchObject({
      code: "tool_call_outcome_unknown",
    });
  });

  it("forgets a call that failed before it could run", async () => {
    const j = journal();
    const unavailable = async (): Promise<SandboxExecuteCompleted> => {
      throw new WakeloopError("sandbox_not_ready", "not yet", { retryable: true });
    };
    await expect(j.once("s1", "tcall_5", unavailable)).rejects.toMatchObject({ code: "sandbox_not_ready" });
    expect(await j.once("s1", "tcall_5", async () => result("later"))).toMatchObject({ replayed: false });
  });
});
