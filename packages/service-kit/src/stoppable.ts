import type { Bus } from "@wakeloop/bus";
import type { Database } from "@wakeloop/db";
import type { Logger, Meter, Tracer } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import type { ServiceConfig } from "./service-env";

/** What an app's `start` hands back: how to stop its work, and whether it is ready to take work. */
export interface Stoppable {
  /**
   * Stop taking new work, then finish or hand back what is in flight. `signal` aborts at the shutdown
   * deadline; after that the connections close under whatever is still running.
   */
  stop(signal: AbortSignal): Promise<void>;
  /** The app's own readiness (e.g. its consumers are attached); counted as ready when omitted. */
  isReady?(): boolean;
}

/** Everything `runService` has opened for the app; the app closes none of it. */
export interface ServiceContext<C extends ServiceConfig> {
  name: string;
  config: C;
  log: Logger;
  db: Kysely<Database>;
  bus: Bus;
  tracer: Tracer;
  /** Create the app's instruments from it once, in `start`. */
  meter: Meter;
}
