import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";

/** A small HTTP server of a service's own (metrics, health), listening on its port. */
export interface ListeningServer {
  /** The bound port (differs from the requested one when that was 0). */
  port: number;
  /** Stops listening and drops open connections (a scrape or probe never holds a shutdown). */
  close(): Promise<void>;
}

export type MetricsServer = ListeningServer;

/** Where a server listens: `port` 0 is any free port; `host` is the interface address to bind. */
export interface ListenAddress {
  port: number;
  host: string;
}

/** Listens on `address`, failing if it cannot bind. */
export async function listen(server: Server, address: ListenAddress): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * `GET /metrics` in the Prometheus text format, on its own port so a scrape never queues behind API
 * traffic or health probes. Our own server rather than the exporter's, which cannot report the port
 * it bound when given 0 (tests) and would start listening before the service is up.
 */
export async function startMetricsServer(
  exporter: PrometheusExporter,
  address: ListenAddress,
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    if (request.method !== "GET" || new URL(request.url ?? "/", "http://metrics").pathname !== "/metrics") {
      response
        .writeHead(404, { "content-type": "text/plain" })
        .end("not found; metrics are at GET /metrics\n");
      return;
    }
    exporter.getMetricsRequestHandler(request, response);
  });
  return listen(server, address);
}
