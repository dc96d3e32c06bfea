import { defineService } from "@wakeloop/bus";
import {
  CaptureLearningRequest,
  CaptureLearningResponse,
  MemoryContextRequest,
  MemoryContextResponse,
  MemoryExecuteRequest,
  MemoryExecuteResponse,
  MemoryPingRequest,
  MemoryPingResponse,
  MemoryRecallRequest,
  MemoryRecallResponse,
} from "@wakeloop/contracts";

/**
 * The `memory` service every memory-retrieval replica serves in one queue group
 * (`<p>.svc.memory.<action>`). Replicas share nothing but Postgres, so any of them answers any call.
 */
export const memoryService = defineService("memory", {
  execute: { request: MemoryExecuteRequest, response: MemoryExecuteResponse },
  context: { request: MemoryContextRequest, response: MemoryContextResponse },
  recall: { request: MemoryRecallRequest, response: MemoryRecallResponse },
  capture_learning: { request: CaptureLearningRequest, response: CaptureLearningResponse },
  ping: { request: MemoryPingRequest, response: MemoryPingResponse },
});
