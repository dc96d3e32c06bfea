import type { Bus } from "@wakeloop/bus";
import type { StreamDelta } from "@wakeloop/contracts";
import type { ModelDelta } from "@wakeloop/model-providers";
import type { Logger } from "@wakeloop/telemetry";

/** Whose request the deltas belong to: the fields every published delta carries. */
export interface DeltaTarget {
  tenantId: string;
  sessionId: string;
  wakeId: string;
  /** The request's stored `span.model_request_start`. */
  requestStartId: string;
}

/** Past this many characters waiting, they go out at once instead of at the end of the read. */
const MAX_PENDING_CHARS = 16_384;

/**
 * Forwards a model request's deltas to the session's live streams (core NATS, see @wakeloop/bus
 * deltas.ts). The deltas of one provider read arrive in one turn of the event loop; they leave merged
 * per part in the next (`setImmediate`), so a burst is one message and no token waits past the read it
 * came in. Publishing never blocks nor fails the wake: a delta is a preview, the stored events are the
 * answer.
 */
export function deltaPublisher(
  bus: Bus,
  target: DeltaTarget,
  log: Logger,
): (delta: ModelDelta, attempt: number) => void {
  let pending: StreamDelta[] = [];
  let pendingChars = 0;
  let scheduled: NodeJS.Immediate | undefined;

  const flush = () => {
    clearImmediate(scheduled);
    scheduled = undefined;
    const batch = pending;
    pending = [];
    pendingChars = 0;
    try {
      for (const delta of batch) bus.publishDelta(target.tenantId, delta);
    } catch (error) {
      log.debug({ err: error }, "a live delta was not published");
    }
  };

  return (delta, attempt) => {
    const piece = delta.type === "text_delta" ? delta.text : delta.partialJson;
    const last = pending.at(-1);
    if (last !== undefined && last.attempt === attempt && last.index === delta.index) {
      if (last.type === "agent.message_delta" && delta.type === "text_delta") last.text += piece;
      else if (last.type === "agent.tool_use_input_delta" && delta.type === "tool_input_delta")
        last.partial_json += piece;
      else pending.push(streamDelta(target, delta, attempt));
    } else pending.push(streamDelta(target, delta, attempt));
    pendingChars += piece.length;
    if (pendingChars >= MAX_PENDING_CHARS) flush();
    else scheduled ??= setImmediate(flush);
  };
}

function streamDelta(target: DeltaTarget, delta: ModelDelta, attempt: number): StreamDelta {
  const fields = {
    ephemeral: true as const,
    session_id: target.sessionId,
    wake_id: target.wakeId,
    model_request_start_id: target.requestStartId,
    attempt,
    index: delta.index,
  };
  return delta.type === "text_delta"
    ? { type: "agent.message_delta", ...fields, text: delta.text }
    : {
        type: "agent.tool_use_input_delta",
        ...fields,
        tool_call_id: delta.id,
        name: delta.name,
        partial_json: delta.partialJson,
      };
}
