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
