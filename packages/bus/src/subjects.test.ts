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
    expect(s.deadLetter("wakes")).toBe("wl.dlq.wakes");
    expect(s.sessionEvents("tnt_1", "sesn_1")).toBe("wl.evt.tnt_1.sesn_1.>");
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
    expect(() => s.evt("t", "s", "user.>")).toThrow();
    expect(() => s.evt("t", "s", "user..message")).toThrow();
    expect(() => s.svc("sandbox", "")).toThrow();
    expect(() => subjects("wl prod")).toThrow();
  });
});
