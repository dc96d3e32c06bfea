import type { Tracer } from "@opentelemetry/api";
import type { Database } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { EffectiveTool } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import type { SessionView } from "../session/session-view";
import type { SessionWriter } from "../session/session-writer";
import type { WakeSettings } from "../wake-settings";

export interface ToolContext {
  /** Where inline tools' effects go: the pool, or the transaction their results commit in. */
  db: Kysely<Database>;
  /** True when the calls' effects commit with their results, so no call can have an unknown outcome. */
  inCommit?: boolean;
  sandbox: SandboxClient | null;
  tracer: Tracer;
  view: SessionView;
  writer: SessionWriter;
  settings: WakeSettings;
  /** Interrupt or lost lease: `cancel` tools stop, `block` tools finish. */
  signal: AbortSignal;
}

export interface RunnableCall {
  id: string;
  tool: EffectiveTool;
  input: Record<string, unknown>;
  /** A loop-detection warning added to the result as a runtime note for the model. */
  note?: string;
  /** A person allowed this call (`user.tool_confirmation`), which also covers the exec policy's ask. */
  approved?: boolean;
}

/** Inline tools run in the worker with effects, if any, in our own Postgres: they can commit with their call. */
export function runsInDatabase(tool: Pick<EffectiveTool, "executor">): boolean {
  return tool.executor === "inline";
}
