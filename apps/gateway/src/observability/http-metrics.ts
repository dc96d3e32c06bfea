import { boundedAttributes, type Meter, MetricName, STEP_DURATION_BUCKETS_S } from "@wakeloop/telemetry";
import type { FastifyInstance } from "fastify";

/** Methods × routes × status codes is small; the bound only guards against a surprise. */
const HTTP_SERIES_LIMIT = 2_000;
/** Requests that matched no route carry no `http.route`, so a scan of random paths adds no series. */
const NO_ROUTE = "";

/**
 * `http.server.request.duration` (OpenTelemetry HTTP semantic conventions) for every API request, by
 * method, route template and status code. Recorded when the response ends, so an event stream counts
 * for as long as it stayed open.
 */
export function registerHttpMetrics(app: FastifyInstance, meter: Meter): void {
  const duration = meter.createHistogram(MetricName.httpServerDuration, {
    unit: "s",
    description: "API request duration, by method, route and status code",
    advice: { explicitBucketBoundaries: STEP_DURATION_BUCKETS_S },
  });
  const attributes = boundedAttributes(
    HTTP_SERIES_LIMIT,
    (method: string, route: string, status: string) => ({
      "http.request.method": method,
      ...(route === NO_ROUTE ? {} : { "http.route": route }),
      "http.response.status_code": Number(status),
    }),
  );
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? NO_ROUTE;
    duration.record(reply.elapsedTime / 1_000, attributes(request.method, route, String(reply.statusCode)));
  });
}
