import type { EnvironmentConfig, MemoryAuthor } from "@wakeloop/contracts";
import type { AgentChannel } from "../agent-channel";
import type { SessionBrowser } from "../browser/sandbox-browsers";
import type { SubstrateMirror, SubstrateScope } from "../substrate-mirror";

/** What a tool handler works with: the session's agent channel, its browser and its environment. */
export type ToolContext = {
  channel: AgentChannel;
  browser: SessionBrowser;
  /** Aborted when the call is interrupted (`cancel`). */
  signal: AbortSignal;
  environment: EnvironmentConfig;
  callId: string;
  /** Mounted roots and their access, for sandbox_describe. */
  mounts: Array<{ path: string; access: "rw" | "ro"; kind: "workspace" | "substrate" }>;
  /** The agent's substrate and the author of what this call writes to it; null when none is mounted. */
  substrate: { mirror: SubstrateMirror; scope: SubstrateScope; author: MemoryAuthor } | null;
};
