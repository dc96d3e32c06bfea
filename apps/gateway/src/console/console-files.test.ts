import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerConsole } from "./console-files";

// The console's files as vite writes them: index.html and content-hashed assets.
let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "wl-console-"));
  await mkdir(join(dir, "assets"));
  await writeFile(
    join(dir, "index.html"),
    '<!doctype html><script src="/console/assets/index-abc.js"></script>',
  );
  await writeFile(join(dir, "assets", "index-abc.js"), "console.log(1)");
  await writeFile(join(dir, "assets", "index-abc.css"), "body{}");
  await writeFile(join(dir, "assets", "index-abc.js.br"), brotliCompressSync("console.log(1)"));
  app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  expect(registerConsole(app, dir)).toBe("served");
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("web console files", () => {
  it("serves hashed assets with their content type, cached for good", async () => {
    const script = await app.inject({ method: "GET", url: "/console/assets/index-abc.js" });
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toMatch(/^text\/javascript|^application\/javascript/);
    expect(script.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(script.body).toBe("console.log(1)");
    const style = await app.inject({ method: "GET", url: "/console/assets/index-abc.css" });
    expect(style.headers["content-type"]).toMatch(/^text\/css/);
  });

  it("sends the precompressed copy to a browser that accepts it", async () => {
    const script = await app.inject({
      method: "GET",
      url: "/console/assets/index-abc.js",
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-encoding"]).toBe("br");
    expect(script.headers["content-type"]).toMatch(/^text\/javascript|^application\/javascript/);
    expect(script.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(brotliDecompressSync(script.rawPayload).toString()).toBe("console.log(1)");
    // No .gz copy here: a gzip-only client gets the file as it is.
    const plain = await app.inject({
      method: "GET",
      url: "/console/assets/index-abc.js",
      headers: { "accept-encoding": "gzip" },
    });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body).toBe("console.log(1)");
  });

  it("answers the app shell, revalidated, for /console and every client-side route", async () => {
    for (const url of ["/console", "/console/", "/console/sessions/abc", "/console/agents?x=1"]) {
      const page = await app.inject({ method: "GET", url });
      expect(page.statusCode, url).toBe(200);
      expect(page.headers["content-type"], url).toMatch(/^text\/html/);
      expect(page.headers["cache-control"], url).toBe("no-cache");
      expect(page.headers["content-security-policy"], url).toContain("default-src 'self'");
      expect(page.body, url).toContain("/console/assets/index-abc.js");
    }
  });

  it("answers a missing file with a 404, not the app shell", async () => {
    const missing = await app.inject({ method: "GET", url: "/console/assets/index-old.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: { type: "not_found_error", message: expect.any(String) } });
  });

  it("says how to build the console when it is not built", async () => {
    const bare = Fastify();
    expect(registerConsole(bare, join(dir, "nowhere"))).toBe("not_built");
    const answer = await bare.inject({ method: "GET", url: "/console/sessions" });
    expect(answer.statusCode).toBe(404);
    expect(answer.json().error.message).toContain("npm run build");
    await bare.close();
  });
});
