import { Writable } from "node:stream";
import { createLogger } from "@wakeloop/telemetry";
import { describe, expect, it } from "vitest";
import { pullGate } from "./pull-gate";

const MB = 2 ** 20;

function gate(maxRssMb: number, maxDbWaiters: number) {
  const state = { rss: 100 * MB, waiters: 0 };
  const messages: string[] = [];
  const log = createLogger({
    service: "pull-gate-test",
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        messages.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
        done();
      },
    }),
  });
  const mayPull = pullGate({
    maxRssBytes: maxRssMb * MB,
    maxDbWaiters,
    rssBytes: () => state.rss,
    dbWaiters: () => state.waiters,
    log,
  });
  return { state, messages, mayPull };
}

describe("pullGate", () => {
  it("holds back while memory is above its limit, and lets go below it", () => {
    const { state, messages, mayPull } = gate(512, 8);
    expect(mayPull()).toBe(true);
    state.rss = 513 * MB;
    expect(mayPull()).toBe(false);
    expect(mayPull()).toBe(false);
    state.rss = 400 * MB;
    expect(mayPull()).toBe(true);
    expect(messages).toEqual([
      "holding back new wakes: memory or Postgres connections are short",
      "taking new wakes again",
    ]);
  });

  it("holds back while more queries than allowed wait for a Postgres connection", () => {
    const { state, mayPull } = gate(512, 8);
    state.waiters = 8;
    expect(mayPull()).toBe(true);
    state.waiters = 9;
    expect(mayPull()).toBe(false);
    state.waiters = 0;
    expect(mayPull()).toBe(true);
  });
});
