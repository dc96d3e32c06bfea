// Costs are integer micro-USD on the wire; this shows them as dollars (schema-free, for browsers too).
export { microUsdText } from "@wakeloop/contracts/money";
export {
  type ClientOptions,
  createClient,
  type EventStream,
  type ListOptions,
  type ListSessionsOptions,
  type Page,
  type StreamOptions,
  WakeloopApiError,
  type WakeloopClient,
} from "./client";
export { LivePreview } from "./live-preview";
