import { describe, expect, it } from "vitest";
import { hrefOf, parseRoute, type Route } from "./router";

describe("console routes", () => {
  it("reads every page from its path and writes it back", () => {
    const routes: Route[] = [
      { page: "sessions" },
      { page: "session", id: "sesn_01abc" },
      { page: "agents" },
      { page: "agent", id: "agent_01abc" },
      { page: "environments" },
      { page: "environment", id: "env_01abc" },
    ];
    for (const route of routes) expect(parseRoute(hrefOf(route))).toEqual(route);
  });

  it("opens the sessions list for /console, a trailing slash and unknown paths", () => {
    for (const path of ["/console", "/console/", "/console/nope/x", "/console/sessions/"]) {
      expect(parseRoute(path), path).toEqual({ page: "sessions" });
    }
  });

  it("escapes ids in links and unescapes them when read", () => {
    expect(hrefOf({ page: "session", id: "a/b c" })).toBe("/console/sessions/a%2Fb%20c");
    expect(parseRoute("/console/sessions/a%2Fb%20c")).toEqual({ page: "session", id: "a/b c" });
  });
});
