import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_WAKELOOP_SESSION_ID,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
} from "./attributes";
import { SessionAttributionProcessor } from "./session-attribution";

describe("SessionAttributionProcessor", () => {
  it("gives child spans their wake's tenant, session and wake ids, keeping their own", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SessionAttributionProcessor(), new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer("test");
    const { trace, context } = await import("@opentelemetry/api");
    const root = tracer.startSpan("invoke_agent", {
      attributes: {
        [ATTR_GEN_AI_CONVERSATION_ID]: "sesn_1",
        [ATTR_WAKELOOP_TENANT_ID]: "tnt_1",
        [ATTR_WAKELOOP_WAKE_ID]: "wake_1",
      },
    });
    const inRoot = trace.setSpan(context.active(), root);
    const tool = tracer.startSpan("execute_tool bash", {}, inRoot);
    const nested = tracer.startSpan("sandbox exec", {}, trace.setSpan(inRoot, tool));
    const own = tracer.startSpan(
      "memory call",
      { attributes: { [ATTR_WAKELOOP_WAKE_ID]: "wake_2" } },
      inRoot,
    );
    const orphan = tracer.startSpan("startup");
    for (const span of [nested, tool, own, orphan, root]) span.end();
    const byName = new Map(exporter.getFinishedSpans().map((span) => [span.name, span.attributes]));
    const ids = {
      [ATTR_WAKELOOP_SESSION_ID]: "sesn_1",
      [ATTR_WAKELOOP_TENANT_ID]: "tnt_1",
      [ATTR_WAKELOOP_WAKE_ID]: "wake_1",
    };
    expect(byName.get("execute_tool bash")).toEqual(ids);
    expect(byName.get("sandbox exec")).toEqual(ids);
    expect(byName.get("memory call")).toEqual({ ...ids, [ATTR_WAKELOOP_WAKE_ID]: "wake_2" });
    expect(byName.get("startup")).toEqual({});
    await provider.shutdown();
  });
});
