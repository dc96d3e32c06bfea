import type { ReadableStreamReadResult } from "node:stream/web";
import { EgressError } from "./egress-error";

/**
 * `body` that errors with `egress_response_too_large` once more than `maxBytes` arrived, so a hostile
 * server cannot stream without end into a worker's memory. `onEnd` runs once, however the body ends.
 */
export function capBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  onEnd: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        onEnd();
        throw error;
      }
      if (chunk.done) {
        onEnd();
        controller.close();
        return;
      }
      received += chunk.value.byteLength;
      if (received > maxBytes) {
        onEnd();
        await reader.cancel();
        controller.error(tooLarge(maxBytes));
        return;
      }
      controller.enqueue(chunk.value);
    },
    async cancel(reason) {
      onEnd();
      await reader.cancel(reason);
    },
  });
}

export function tooLarge(maxBytes: number): EgressError {
  return new EgressError(
    "egress_response_too_large",
    `the response was larger than the egress limit of ${maxBytes} bytes`,
    { limit: maxBytes },
  );
}
