import type { Logger } from "@wakeloop/telemetry";

/** The slice of the service logger the runner uses; tests pass a silent one. */
export type RunnerLog = Pick<Logger, "debug" | "info" | "warn" | "error">;
