import type { EnvironmentConfig } from "@wakeloop/contracts";
import type { AgentChannel } from "../agent-channel";

/** What a tool handler works with: the session's agent channel and its environment. */
export type ToolContext = {
  channel: AgentChannel;
  environment: EnvironmentConfig;
  callId: string;
  /** Mounted roots and their access, for sandbox_describe. */
  mounts: Array<{ path: string; access: "rw" | "ro"; kind: "workspace" | "substrate" }>;
};
