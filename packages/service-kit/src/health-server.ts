import { createServer, type ServerResponse } from "node:http";
import { type ListenAddress, type ListeningServer, listen } from "@wakeloop/telemetry";

/** Each named check and whether it passed; ready when every one did. */
export type ReadinessChecks = Record<string, boolean>;

export type HealthServer = ListeningServer;

/**
 * `GET /healthz`: the process is alive (answers until exit, so a liveness probe never kills a service
 * that is draining). `GET /readyz`: 200 only while every readiness check passes, else 503; both
 * bodies are JSON. Kept off the API port so probes never wait behind API traffic.
 */
export async function startHealthServer(
  options: ListenAddress & { readiness: () => Promise<ReadinessChecks> },
): Promise<HealthServer> {
  const server = createServer((request, response) => {
    if (request.method !== "GET") return reply(response, 405, { error: "method not allowed" });
    if (request.url === "/healthz") return reply(response, 200, { status: "ok" });
    if (request.url !== "/readyz") return reply(response, 404, { error: "not found" });
    options.readiness().then(
      (checks) => {
        const ready = Object.values(checks).every(Boolean);
        reply(response, ready ? 200 : 503, { ready, checks });
      },
      () => reply(response, 503, { ready: false }),
    );
  });
  return listen(server, options);
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
