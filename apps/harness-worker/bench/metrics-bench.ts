import { pathToFileURL } from "node:url";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOKEN_TYPE,
  GEN_AI_DURATION_BUCKETS_S,
  GEN_AI_TOKEN_BUCKETS,
  MetricName,
  startTelemetry,
} from "@wakeloop/telemetry";
import { type LatencySummary, round2, scrapeMetrics, summarize } from "@wakeloop/testing";
import { createWakeMetrics } from "../src/wake-metrics";

// What metrics cost a wake: the recordings of one model request (its duration and two token counts)
// as the harness makes them, against the same recordings with a new attribute object each time, and
// a Prometheus scrape of a worker that has seen many models and tools.
// Run: npx tsx apps/harness-worker/bench/metrics-bench.ts (or npm run bench -- --only metrics)

export interface MetricsBench {
  /** Nanoseconds per model request recorded (1 duration + 2 token samples), attribute sets reused. */
  modelRequestNs: number;
  /** The same with attribute objects built per call, as naive instrumentation would. */
  modelRequestFreshAttributesNs: number;
  /** Nanoseconds per tool call recorded (duration, and the error counter for one call in ten). */
  toolCallNs: number;
  /** One GET /metrics with `series` model series and as many tool series. */
  scrapeMs: LatencySummary;
  series: number;
  scrapeBytes: number;
}

function nsPerOp(ops: number, run: (index: number) => void): number {
  for (let index = 0; index < Math.min(ops, 10_000); index++) run(index); // warm-up
  const start = process.hrtime.bigint();
  for (let index = 0; index < ops; index++) run(index);
  return round2(Number(process.hrtime.bigint() - start) / ops);
}

export async function runMetricsBench(options: { ops?: number; series?: number; scrapes?: number } = {}) {
  const ops = options.ops ?? 200_000;
  const series = options.series ?? 50;
  const scrapes = options.scrapes ?? 50;
  const telemetry = startTelemetry({ serviceName: "metrics-bench" });
  const USAGE = {
    input_tokens: 200,
    output_tokens: 300,
    cache_read_input_tokens: 1_000,
    cache_creation_input_tokens: 0,
  };
  try {
    const metrics = createWakeMetrics(telemetry.meter);
    const models = Array.from({ length: series }, (_, index) => `model-${index}`);
    const tools = Array.from({ length: series }, (_, index) => `tool_${index}`);
    const modelRequestNs = nsPerOp(ops, (index) => {
      const model = models[index % series] ?? "";
      metrics.modelRequest("openai", model, 0.42);
      metrics.tokens("openai", model, USAGE);
    });

    const toolCallNs = nsPerOp(ops, (index) =>
      metrics.toolCall(tools[index % series] ?? "", 0.003, index % 10 === 0 ? "tool_error" : undefined),
    );

    const server = await telemetry.serveMetrics({ port: 0, host: "127.0.0.1" });
    const url = `http://127.0.0.1:${server.port}/metrics`;
    const samples: number[] = [];
    let scrapeBytes = 0;
    for (let index = 0; index < scrapes; index++) {
      const start = performance.now();
      const scrape = await scrapeMetrics(url);
      samples.push(performance.now() - start);
      scrapeBytes = scrape.text.length;
    }
    // The naive way, on instruments of the same shape (made after the scrapes, which they would swell).
    const duration = telemetry.meter.createHistogram(`${MetricName.genAiOperationDuration}.fresh`, {
      unit: "s",
      advice: { explicitBucketBoundaries: GEN_AI_DURATION_BUCKETS_S },
    });
    const tokens = telemetry.meter.createHistogram(`${MetricName.genAiTokenUsage}.fresh`, {
      advice: { explicitBucketBoundaries: GEN_AI_TOKEN_BUCKETS },
    });
    const modelRequestFreshAttributesNs = nsPerOp(ops, (index) => {
      const base = {
        [ATTR_GEN_AI_OPERATION_NAME]: "chat",
        [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
        [ATTR_GEN_AI_SYSTEM]: "openai",
        [ATTR_GEN_AI_REQUEST_MODEL]: models[index % series] ?? "",
      };
      duration.record(0.42, base);
      tokens.record(1_200, { ...base, [ATTR_GEN_AI_TOKEN_TYPE]: "input" });
      tokens.record(300, { ...base, [ATTR_GEN_AI_TOKEN_TYPE]: "output" });
    });

    return {
      modelRequestNs,
      modelRequestFreshAttributesNs,
      toolCallNs,
      scrapeMs: summarize(samples),
      series,
      scrapeBytes,
    } satisfies MetricsBench;
  } finally {
    await telemetry.shutdown();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await runMetricsBench(), null, 2));
}
