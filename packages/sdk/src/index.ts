export {
  type ClientOptions,
  createClient,
  type ListOptions,
  type ListSessionsOptions,
  type Page,
  type StreamOptions,
  WakeloopApiError,
  type WakeloopClient,
} from "./client";
