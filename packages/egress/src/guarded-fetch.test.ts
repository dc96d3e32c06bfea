import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EgressPolicy } from "./egress-policy";
import { createGuardedFetch, type GuardedFetchOptions } from "./guarded-fetch";

// A local server stands in for the outside world; names are mapped to it by an injected resolver, so
// nothing here depends on DNS. 127.0.0.1 is refused unless a test allows it, which is the point.
let server: Server;
let port = 0;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    if (req.url === "/redirect-internal") {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/internal` }).end();
    } else if (req.url === "/redirect-same") {
      res.writeHead(302, { location: "/ok" }).end();
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "text/plain" });
      // Chunked, so no content-length warns the client: only counting the bytes stops it.
      for (let i = 0; i < 64; i++) res.write("x".repeat(1_024));
      res.end();
    } else if (req.url === "/declared-big") {
      // Announces more than it sends and stays open: the client must refuse on the header alone.
      res.writeHead(200, { "content-length": String(10_000_000) }).write("x");
    } else if (req.url === "/echo") {
      const parts: Buffer[] = [];
      req.on("data", (part: Buffer) => parts.push(part));
      req.on("end", () => {
        const body = Buffer.concat(parts).toString("utf8");
        res.writeHead(200, { "content-type": "application/json", "set-cookie": ["a=1", "b=2"] });
        res.end(JSON.stringify({ method: req.method, headers: req.headers, body }));
      });
    } else if (req.url === "/hang") {
      res.writeHead(200).write("partial");
    } else {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const resolveToLocal = async (host: string) => (host.endsWith(".test") ? ["127.0.0.1"] : []);

function guarded(policy: EgressPolicy, overrides: Partial<GuardedFetchOptions> = {}) {
  let lookups = 0;
  const fetch = createGuardedFetch({
    policy,
    resolve: async (host) => {
      lookups += 1;
      return resolveToLocal(host);
    },
    maxResponseBytes: 16_384,
    timeoutMs: 10_000,
    followRedirects: true,
    ...overrides,
  });
  return { fetch, lookups: () => lookups };
}

const code = (value: string) => expect.objectContaining({ code: value });
/** fetch wraps what the dispatcher threw in a TypeError's cause. */
const causeCode = (value: string) => expect.objectContaining({ cause: code(value) });

// Requests that refuse redirects (they carry credentials) go through the dispatcher without fetch's
// machinery; the guarantees must be the same on both paths.
describe.each([
  ["following redirects", true],
  ["refusing redirects", false],
])("createGuardedFetch against a local server, %s", (_mode, follow) => {
  it("refuses 127.0.0.1 unless the operator allowed it", async () => {
    const { fetch } = guarded({ allowedHosts: [] }, { followRedirects: follow });
    await expect(fetch(`http://127.0.0.1:${port}/ok`)).rejects.toThrow(causeCode("egress_refused"));
    const allowed = guarded({ allowedHosts: ["127.0.0.1"] }, { followRedirects: follow });
    expect(await (await allowed.fetch(`http://127.0.0.1:${port}/ok`)).text()).toBe("ok");
  });

  it("refuses a name that resolves to loopback", async () => {
    const { fetch } = guarded({ allowedHosts: [] }, { followRedirects: follow });
    await expect(fetch(`http://sneaky.test:${port}/ok`)).rejects.toThrow(causeCode("egress_refused"));
    expect(seen.some((request) => request.headers.host === `sneaky.test:${port}`)).toBe(false);
  });

  it("connects to the address it checked: the name is resolved once and never again", async () => {
    // `pinned.test` is unknown to the system resolver, so the request can only arrive if the socket
    // went to the checked address itself; the Host header still names the host.
    const { fetch, lookups } = guarded({ allowedHosts: ["pinned.test"] }, { followRedirects: follow });
    const response = await fetch(`http://pinned.test:${port}/ok`);
    expect(await response.text()).toBe("ok");
    expect(lookups()).toBe(1);
    expect(seen.at(-1)?.headers.host).toBe(`pinned.test:${port}`);
  });

  it("stops reading a body past the size limit", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] }, { followRedirects: follow });
    const response = await fetch(`http://allowed.test:${port}/big`);
    await expect(response.text()).rejects.toThrow(code("egress_response_too_large"));
  });

  it("refuses a declared length past the limit before reading", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] }, { followRedirects: follow });
    await expect(fetch(`http://allowed.test:${port}/declared-big`)).rejects.toThrow(
      code("egress_response_too_large"),
    );
  });

  it("ends an exchange that outlives the time limit", async () => {
    const { fetch } = guarded(
      { allowedHosts: ["allowed.test"] },
      { followRedirects: follow, timeoutMs: 300 },
    );
    const response = await fetch(`http://allowed.test:${port}/hang`);
    await expect(response.text()).rejects.toThrow(code("egress_timeout"));
  });
});

describe("createGuardedFetch against a local server", () => {
  it("refuses a redirect from an allowed host to 127.0.0.1", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] });
    const before = seen.length;
    await expect(fetch(`http://allowed.test:${port}/redirect-internal`)).rejects.toThrow(
      causeCode("egress_refused"),
    );
    expect(seen.slice(before).map((request) => request.path)).toEqual(["/redirect-internal"]);
  });

  it("follows a redirect to the same allowed host", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] });
    expect(await (await fetch(`http://allowed.test:${port}/redirect-same`)).text()).toBe("ok");
  });

  it("refuses every redirect when credentials ride on the request", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] }, { followRedirects: false });
    const before = seen.length;
    await expect(
      fetch(`http://allowed.test:${port}/redirect-same`, { headers: { "x-api-key": "secret" } }),
    ).rejects.toThrow(code("egress_redirect_refused"));
    expect(seen.slice(before).map((request) => request.path)).toEqual(["/redirect-same"]);
  });

  it("sends a request without redirects as fetch would: method, body, headers, and reads the answer", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] }, { followRedirects: false });
    const response = await fetch(`http://allowed.test:${port}/echo`, {
      method: "post",
      body: "hello",
      headers: [["x-api-key", "secret"]],
    });
    expect(response.status).toBe(200);
    expect(response.statusText).toBe("OK");
    expect(response.url).toBe(`http://allowed.test:${port}/echo`);
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toMatchObject({
      method: "POST",
      body: "hello",
      headers: {
        host: `allowed.test:${port}`,
        "x-api-key": "secret",
        "content-type": "text/plain;charset=UTF-8",
        "content-length": "5",
      },
    });
  });

  it("ends a request without redirects when the caller aborts, with the caller's reason", async () => {
    const { fetch } = guarded({ allowedHosts: ["allowed.test"] }, { followRedirects: false });
    const caller = new AbortController();
    const response = await fetch(`http://allowed.test:${port}/hang`, { signal: caller.signal });
    const reading = response.text();
    caller.abort(new Error("the caller stopped"));
    await expect(reading).rejects.toThrow("the caller stopped");
    await expect(fetch(`http://allowed.test:${port}/ok`, { signal: caller.signal })).rejects.toThrow(
      "the caller stopped",
    );
  });
});
