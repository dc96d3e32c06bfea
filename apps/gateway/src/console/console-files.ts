import { existsSync } from "node:fs";
import { join, sep } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Where the web console is served: same origin as the API, so it needs no CORS. */
export const CONSOLE_PATH = "/console";

// Vite names every file under assets/ after a hash of its content: a changed file is a new URL, so
// browsers may keep these for a year. Everything else (index.html) is revalidated on each load, so a
// new build is picked up at once.
const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "no-cache";
// The console loads only its own scripts and styles and talks only to this origin.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Serves the built console (apps/console/dist) at /console: the files with their content types, ETags
 * and cache headers, and index.html for every other path under /console that names no file, so a
 * reload of a client-side route (`/console/sessions/…`) opens the app there. The console is public
 * static content; the API calls it makes carry the user's API key.
 */
export function registerConsole(app: FastifyInstance, dir: string): "served" | "not_built" {
  if (!existsSync(join(dir, "index.html"))) {
    const notBuilt = (_: unknown, reply: FastifyReply) =>
      reply.code(404).send({
        error: {
          type: "not_found_error",
          message: `the web console is not built (no ${join(dir, "index.html")}): run \`npm run build\``,
        },
      });
    app.get(CONSOLE_PATH, notBuilt);
    app.get(`${CONSOLE_PATH}/*`, notBuilt);
    return "not_built";
  }
  const assets = join(dir, "assets") + sep;
  // Loaded with the other plugins when the server starts (fastify queues registrations).
  app.register(fastifyStatic, {
    root: dir,
    prefix: `${CONSOLE_PATH}/`,
    // One route per built file, read at start-up; other paths fall through to the app shell below.
    wildcard: false,
    index: false,
    // infra/build.mjs writes .br and .gz next to each script and style; a browser that accepts one gets it.
    preCompressed: true,
    cacheControl: false,
    setHeaders: (response, path) => {
      response.setHeader("cache-control", path.startsWith(assets) ? IMMUTABLE : REVALIDATE);
      response.setHeader("x-content-type-options", "nosniff");
      if (/\.html(\.br|\.gz)?$/.test(path)) {
        response.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
      }
    },
  });
  const appShell = (request: { url: string }, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "";
    // A missing file (a stale asset URL, a typo) is a 404, not the app shell parsed as a script.
    if (/\.[a-z0-9]+$/i.test(path)) {
      return reply.code(404).send({ error: { type: "not_found_error", message: `no file ${path}` } });
    }
    return reply.sendFile("index.html");
  };
  app.get(CONSOLE_PATH, appShell);
  app.get(`${CONSOLE_PATH}/*`, appShell);
  return "served";
}
