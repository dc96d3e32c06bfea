import {
  type SandboxEnsureRequest,
  type SandboxExecuteCompleted,
  SandboxExecuteRequest,
  type SandboxExecuteResponse,
  WakeloopError,
} from "@wakeloop/contracts";
import { checkExec } from "@wakeloop/sandbox-client";
import type { AgentChannel } from "./agent-channel";
import type { SandboxBrowsers } from "./browser/sandbox-browsers";
import type { CallJournal } from "./call-journal";
import type { ApprovalCheck } from "./committed-allow";
import { SUBSTRATE_MOUNT, WORKSPACE } from "./container-spec";
import type { RunnerLog } from "./runner-log";
import type { HeldSandbox, SandboxRegistry } from "./sandbox-registry";
import type { Binding } from "./session-store";
import type { SubstrateMirror } from "./substrate-mirror";
import { failure, type ToolOutcome } from "./tools/output-format";
import { runTool } from "./tools/run-tool";
import type { ToolContext } from "./tools/tool-context";

export type SandboxExecutorDeps = {
  registry: SandboxRegistry;
  journal: CallJournal;
  /** Asked before a call sent as `approved` runs: is its allow really committed? */
  approvals: ApprovalCheck;
  substrates: SubstrateMirror | null;
  log: RunnerLog;
  /** Brings a stopped or broken sandbox back (the manager's `ensure`, under the session's lock). */
  ensure: (request: SandboxEnsureRequest) => Promise<unknown>;
  /** The sessions' browsers, for the browser tools. */
  browsers: SandboxBrowsers;
};

type Approval = { command: string; reason: string };

/**
 * Tool calls on a held sandbox: once per tool call id (the journal), through the exec policy (deny,
 * or ask unless Postgres holds the allow), on the agent channel of a sandbox revived if it must be.
 */
export class SandboxExecutor {
  /** Calls running now, by session and call id: `cancel` aborts the ones that run in the runner. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly deps: SandboxExecutorDeps) {}

  async execute(raw: unknown): Promise<SandboxExecuteResponse> {
    const request = SandboxExecuteRequest.parse(raw);
    const sandbox = this.deps.registry.held(request.session_id, request.tenant_id);
    sandbox.inflight += 1;
    try {
      const channel = await this.connected(sandbox);
      const environment = sandbox.binding.environment;
      let approval: Approval | null = null;
      const result = await this.deps.journal.once(request.session_id, request.tool_call_id, async () => {
        const check = checkExec(environment, request.tool, request.input);
        if (check !== null) {
          if (check.verdict === "deny")
            return completed(request.tool_call_id, failure("exec_denied", check.reason));
          if (check.verdict === "ask" && !(request.approved && (await this.committedAllow(request)))) {
            approval = { command: check.command ?? "", reason: check.reason };
            return null;
          }
        }
        const key = runningKey(request.session_id, request.tool_call_id);
        const abort = new AbortController();
        this.running.set(key, abort);
        try {
          const outcome = await runTool(
            {
              channel,
              browser: this.deps.browsers.of(request.session_id, () => sandbox.container?.id ?? null),
              signal: abort.signal,
              environment,
              callId: request.tool_call_id,
              mounts: mounts(sandbox.binding),
              substrate: this.substrateOf(sandbox.binding, request),
            },
            request.tool,
            request.input,
          );
          return completed(request.tool_call_id, outcome);
        } finally {
          this.running.delete(key);
        }
      });
      if (result !== null) return result;
      const pending = approval as Approval | null;
      return {
        outcome: "needs_approval",
        tool_call_id: request.tool_call_id,
        command: pending?.command ?? "",
        reason: pending?.reason ?? "the exec policy asks for approval",
      };
    } finally {
      sandbox.inflight -= 1;
      sandbox.lastUsedAt = Date.now();
    }
  }

  /** Interrupts a running call: its process group is killed and the call returns its result. */
  async cancel(tenantId: string, sessionId: string, toolCallId: string): Promise<boolean> {
    const sandbox = this.deps.registry.get(sessionId);
    if (!sandbox) return false;
    this.deps.registry.assertOwner(sandbox.binding, tenantId);
    const running = this.running.get(runningKey(sessionId, toolCallId));
    running?.abort();
    const channel = sandbox.container?.channel;
    if (!channel || channel.closed) return false;
    const { cancelled } = await channel.call("call.cancel", { callId: toolCallId });
    return cancelled || running !== undefined;
  }

  /** The channel of a sandbox that must answer now: a stopped or broken one is revived first. */
  private async connected(sandbox: HeldSandbox): Promise<AgentChannel> {
    const channel = sandbox.container?.channel;
    if (sandbox.status === "ready" && channel && !channel.closed) return channel;
    const { tenant_id, session_id } = sandbox.binding;
    await this.deps.ensure({ tenant_id, session_id, environment: sandbox.binding.environment });
    const revived = sandbox.container?.channel;
    if (!revived || revived.closed) {
      throw new WakeloopError("sandbox_not_ready", `the sandbox of session ${session_id} is not answering`, {
        retryable: true,
      });
    }
    return revived;
  }

  /** The agent's substrate for a call of a session whose sandbox mounts it. */
  private substrateOf(
    binding: Binding,
    request: { tool_call_id: string; wake_id?: string | undefined },
  ): ToolContext["substrate"] {
    const mirror = this.deps.substrates;
    if (mirror === null || binding.agent_id === null || binding.substrate_volume === null) return null;
    return {
      mirror,
      scope: { tenantId: binding.tenant_id, agentId: binding.agent_id },
      author: {
        kind: "tool",
        session_id: binding.session_id,
        wake_id: request.wake_id ?? null,
        tool_call_id: request.tool_call_id,
      },
    };
  }

  private async committedAllow(request: {
    tenant_id: string;
    session_id: string;
    tool_call_id: string;
  }): Promise<boolean> {
    const allowed = await this.deps.approvals({
      tenantId: request.tenant_id,
      sessionId: request.session_id,
      toolCallId: request.tool_call_id,
    });
    if (!allowed) {
      this.deps.log.warn(
        { sessionId: request.session_id, toolCallId: request.tool_call_id },
        "a call sent as approved has no committed allow; asking instead",
      );
    }
    return allowed;
  }
}

function mounts(binding: Binding): ToolContext["mounts"] {
  const mounts: ToolContext["mounts"] = [
    { path: WORKSPACE, access: binding.environment.workspace_access, kind: "workspace" },
  ];
  if (binding.substrate_volume) mounts.push({ path: SUBSTRATE_MOUNT, access: "ro", kind: "substrate" });
  return mounts;
}

function runningKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}/${toolCallId}`;
}

function completed(toolCallId: string, outcome: ToolOutcome): SandboxExecuteCompleted {
  return {
    outcome: "completed",
    tool_call_id: toolCallId,
    is_error: outcome.isError,
    content: [{ type: "text", text: outcome.text }, ...(outcome.images ?? [])],
    result: outcome.details,
    replayed: false,
  };
}
