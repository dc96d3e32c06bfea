import { describe, expect, it } from "vitest";
import { streamNamePrefix, subjects } from "./subjects";

describe("subjects", () => {
  it("lays out every subject under the prefix", () => {
    const s = subjects();
    expect(s.prefix).toBe("wl");
    expect(s.evt("tnt_1", "sesn_1", "user.message")).toBe("wl.evt.tnt_1.sesn_1.user.message");
    expect(s.wake("tnt_1", "sesn_1")).toBe("wl.wake.tnt_1.sesn_1");
    expect(s.svc("sandbox", "exec")).toBe("wl.svc.sandbox.exec");
    expect(s.ctl("sesn_1")).toBe("wl.ctl.sesn_1");
    expect(s.delta("tnt_1", "sesn_1")).toBe("wl.delta.tnt_1.sesn_1");
    expect(s.deadLetter("wakes")).toBe("wl.dlq.wakes");
    expect(s.sessionEvents("tnt_1", "sesn_1")).toBe("wl.evt.tnt_1.sesn_1.>");
  });

  it("reads an event subject back into what built it", () => {
    const s = subjects("acme.prod");
    for (const [tenant, session, type] of [
      ["tnt_1", "sesn_1", "user.message"],
      ["tnt-2", "sesn_2", "session.status_idle"],
      ["t", "s", "span.model_request_start"],
    ] as const) {
      expect(s.parseEvt(s.evt(tenant, session, type))).toEqual({ tenant, session, type });
    }
  });

  it("reads nothing from a subject evt could not have built under this prefix", () => {
    const s = subjects("acme.prod");
    expect(subjects("acme").parseEvt(s.evt("t", "s", "user.message"))).toBeNull();
    expect(s.parseEvt(s.wake("t", "s"))).toBeNull();
    expect(s.parseEvt("acme.prod.evt.t.s")).toBeNull();
    expect(s.parseEvt("acme.prod.evt.t.s.")).toBeNull();
    expect(s.parseEvt("acme.prod.evt.t..user.message")).toBeNull();
    expect(s.parseEvt("acme.prod.evt.*.s.user.message")).toBeNull();
    expect(s.parseEvt("acme.prodx.evt.t.s.user.message")).toBeNull();
  });

  it("filters one event type or family across tenants and sessions", () => {
    const s = subjects("wl");
    expect(s.evtFilter("session.status_idle")).toBe("wl.evt.*.*.session.status_idle");
    expect(s.evtFilter("user.>")).toBe("wl.evt.*.*.user.>");
    expect(() => s.evtFilter("user.>.message")).toThrow(
      expect.objectContaining({ code: "bus_invalid_subject_token" }),
    );
    expect(() => s.evtFilter("*")).toThrow();
  });

  it("names streams after the prefix in upper case without dots", () => {
    expect(subjects("t1a2").stream("events")).toBe("T1A2_EVENTS");
    expect(subjects("acme.prod").stream("dlq")).toBe("ACME_PROD_DLQ");
    expect(streamNamePrefix("acme.prod")).toBe("ACME_PROD");
  });

  it("refuses tokens that would change which subjects match", () => {
    const s = subjects("wl");
    expect(() => s.wake("tnt.1", "sesn_1")).toThrow(
      expect.objectContaining({ code: "bus_invalid_subject_token" }),
    );
    expect(() => s.ctl("*")).toThrow();
    expect(() => s.delta("tnt_1", ">")).toThrow();
    expect(() => s.evt("t", "s", "user.>")).toThrow();
    expect(() => s.evt("t", "s", "user..message")).toThrow();
    expect(() => s.svc("sandbox", "")).toThrow();
    expect(() => subjects("wl prod")).toThrow();
  });
});
