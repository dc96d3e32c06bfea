import { fork } from "node:child_process";
import { ModelConfig } from "@wakeloop/contracts";
import { createGuardedFetch } from "@wakeloop/egress";
import { type LatencySummary, summarize } from "@wakeloop/testing";
import { managedTools, providerTools } from "@wakeloop/tool-runtime";
import { createModelClient } from "../packages/model-providers/src/create-model-client";
import type { ModelMessage, ModelRequest } from "../packages/model-providers/src/model-client";
import { stepsMessage } from "./bench-script";
import { cpuMs } from "./process-stats";

/*
 * CPU per streamed model request, client and server apart: the worker's model client (the SDK through
 * the egress guard's fetch, as the harness wires it) against the fake model in a child process. Each
 * request is a step of a `set_state` tool loop at turn `turns`, answered with the next tool call, so
 * the path is the one a durable tool step takes. Client CPU is `process.cpuUsage()` around a batch of
 * sequential requests (a few wakes' worth); the fake's is its process CPU from /proc over the same batch.
 */

function turn(index: number): ModelMessage[] {
  const id = `call_${index.toString().padStart(6, "0")}`;
  return [
    {
      role: "assistant",
      content: [
        {
          type: "tool_call",
          id,
          name: "set_state",
          input: { key: `bench/t/step_${index}`, value: { n: index } },
        },
      ],
    },
    {
      role: "tool",
      results: [
        {
          toolCallId: id,
          content: [{ type: "text", text: `{"key":"bench/t/step_${index}"}` }],
          isError: false,
        },
      ],
    },
  ];
}

export interface ModelHttpBench {
  requests: number;
  turns: number;
  /** Client CPU µs per request, one sample per batch. */
  clientCpuUs: LatencySummary;
  /** The fake model's process CPU µs per request, one sample per batch. */
  fakeCpuUs: LatencySummary;
}

export async function runModelHttpBench({
  batches = 10,
  wakesPerBatch = 5,
  requestsPerWake = 40,
  turns = 20,
} = {}): Promise<ModelHttpBench> {
  const child = fork(new URL("./fake-model-process.ts", import.meta.url), { stdio: "inherit" });
  const url = await new Promise<string>((resolve) =>
    child.once("message", (m) => resolve((m as { url: string }).url)),
  );
  const pid = child.pid as number;
  try {
    const client = createModelClient(
      ModelConfig.parse({ provider: "openai_compatible", id: "fake-model", base_url: `${url}/v1` }),
      {
        timeoutMs: 60_000,
        fetch: createGuardedFetch({
          policy: { allowedHosts: ["127.0.0.1"] },
          maxResponseBytes: 64 * 1024 * 1024,
          timeoutMs: 60_000,
          followRedirects: false,
        }),
      },
    );
    const tools = providerTools(managedTools, "openai");
    const messages: ModelMessage[] = [
      { role: "user", content: [{ type: "text", text: stepsMessage(1_000_000, "t") }] },
    ];
    for (let index = 1; index <= turns; index++) messages.push(...turn(index));
    const request: ModelRequest = {
      model: "fake-model",
      system: "You are a bench.",
      messages,
      tools,
      maxOutputTokens: 1024,
    };
    const clientSamples: number[] = [];
    const fakeSamples: number[] = [];
    const batchSize = wakesPerBatch * requestsPerWake;
    // /proc counts CPU in clock ticks (10 ms): a batch is long enough that a tick is small beside it.
    for (let batch = -1; batch < batches; batch++) {
      const fakeBefore = cpuMs(pid) ?? 0;
      const before = process.cpuUsage();
      for (let wake = 0; wake < wakesPerBatch; wake++) {
        // A fresh signal per wake, handed to each of its requests, as the harness does.
        const { signal } = new AbortController();
        for (let index = 0; index < requestsPerWake; index++) {
          const response = await client.complete(request, { signal });
          if (response.toolCalls.length !== 1)
            throw new Error("the fake model did not answer with a tool call");
        }
      }
      const used = process.cpuUsage(before);
      // One warm-up batch: connections, JIT, the per-message caches.
      if (batch < 0) continue;
      clientSamples.push((used.user + used.system) / batchSize);
      fakeSamples.push((((cpuMs(pid) ?? 0) - fakeBefore) * 1000) / batchSize);
    }
    return {
      requests: batches * batchSize,
      turns,
      clientCpuUs: summarize(clientSamples),
      fakeCpuUs: summarize(fakeSamples),
    };
  } finally {
    child.send("close");
  }
}
