export { createMemoryClient, type MemoryClient, type MemoryClientOptions } from "./memory-client";
export { memoryService } from "./memory-service";
