import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** The article `/article` serves: long enough for Readability to find it. */
export const FIXTURE_ARTICLE = {
  title: "Durable sessions in practice",
  heading: "Why wakes are bounded",
  sentence: "A wake is one bounded run of the harness over a session's committed events.",
} as const;

export interface WebFixture {
  /** `http://127.0.0.1:<port>`: the host a test puts on the web egress allowlist. */
  origin: string;
  /** The same server as `http://127.0.0.2:<port>`: loopback too, but not on any allowlist. */
  privateOrigin: string;
  /** SearXNG-style `GET /search?q=…&format=json`, answering `searchResults(q)`. */
  searchUrl: string;
  /** Queries the search endpoint received, in order. */
  queries: string[];
  close(): Promise<void>;
}

function articleHtml(): string {
  const paragraph = `<p>${FIXTURE_ARTICLE.sentence} Each wake takes a lease, calls the model, runs tools under policy and appends what happened, so a worker that dies leaves nothing half done.</p>`;
  return `<!doctype html><html><head><title>${FIXTURE_ARTICLE.title}</title><style>p{color:red}</style>
<script>window.secret = "not for the model";</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>${FIXTURE_ARTICLE.title}</h1><h2>${FIXTURE_ARTICLE.heading}</h2>${paragraph.repeat(6)}
<p>Read <a href="/data.json">the data</a>.</p></article>
<footer>Copyright nobody</footer></body></html>`;
}

/**
 * A small web for web-tool tests on one local port: an article, JSON, plain text, an image, a large
 * page, a slow one, a 404, redirects (to a page of the same host and to the same server under an
 * address that is not allowlisted), and a SearXNG-compatible search endpoint whose results point back
 * at it.
 */
export async function startWebFixture(): Promise<WebFixture> {
  const queries: string[] = [];
  let port = 0;
  const origin = () => `http://127.0.0.1:${port}`;
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, url: URL) => void> = {
    "/article": (_req, res) => send(res, 200, "text/html; charset=utf-8", articleHtml()),
    "/data.json": (_req, res) =>
      send(res, 200, "application/json", JSON.stringify({ answer: 42, items: [1, 2] })),
    "/notes.txt": (_req, res) => send(res, 200, "text/plain; charset=utf-8", "plain notes\nsecond line"),
    "/image.png": (_req, res) =>
      send(res, 200, "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0])),
    "/large.txt": (_req, res, url) =>
      send(res, 200, "text/plain", "x".repeat(Number(url.searchParams.get("bytes") ?? "100000"))),
    // Headers at once, the body only after `ms`: a page that outlasts a time limit.
    "/slow": (_req, res, url) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.flushHeaders();
      const timer = setTimeout(() => res.end("late"), Number(url.searchParams.get("ms") ?? "5000"));
      res.once("close", () => clearTimeout(timer));
    },
    "/missing": (_req, res) => send(res, 404, "text/html", "<html><body>not here</body></html>"),
    "/redirect": (_req, res) => redirect(res, "/article"),
    "/redirect-private": (_req, res) => redirect(res, `http://127.0.0.2:${port}/article`),
    "/search": (_req, res, url) => {
      if (url.searchParams.get("format") !== "json")
        return send(res, 403, "text/plain", "format not enabled");
      const query = url.searchParams.get("q") ?? "";
      queries.push(query);
      send(res, 200, "application/json", JSON.stringify(searchResults(origin(), query)));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin());
    const route = routes[url.pathname];
    if (route === undefined) return send(res, 404, "text/plain", "no such page");
    route(req, res, url);
  });
  // On every loopback address, so 127.0.0.2 reaches it too (Linux routes all of 127/8 to lo).
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the web fixture has no port");
  port = address.port;
  return {
    origin: origin(),
    privateOrigin: `http://127.0.0.2:${port}`,
    searchUrl: origin(),
    queries,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** SearXNG's JSON shape, with the fields real instances send and Wakeloop ignores (engine, score). */
function searchResults(origin: string, query: string) {
  return {
    query,
    number_of_results: 3,
    results: [
      {
        url: `${origin}/article`,
        title: `${FIXTURE_ARTICLE.title} (${query})`,
        content: FIXTURE_ARTICLE.sentence,
        engine: "fixture",
        score: 1,
        publishedDate: "2026-01-02T00:00:00",
      },
      { url: `${origin}/data.json`, title: "The data", content: "Numbers", engine: "fixture", score: 0.5 },
      { title: "A result without a URL is dropped", content: "", engine: "fixture" },
    ],
    answers: [],
    suggestions: [],
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, "content-length": 0 });
  res.end();
}
