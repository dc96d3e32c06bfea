import type { Bus } from "@wakeloop/bus";
import {
  type EnvironmentConfig,
  type SandboxDescribeResponse,
  type SandboxEnsureResponse,
  type SandboxExecuteResponse,
  type SandboxMcpCloseRequest,
  type SandboxMcpOpenRequest,
  type SandboxMcpOpenResponse,
  type SandboxMcpSendRequest,
  type SandboxReleaseResponse,
  type SandboxToolName,
  WakeloopError,
} from "@wakeloop/contracts";
import { pinnedSandboxService, sandboxService } from "./sandbox-service";

export type SandboxClientOptions = {
  /** Provisioning a cold container can take seconds (image, volume, agent start). */
  ensureTimeoutMs?: number;
  /** Added to the environment's command timeout for `execute`, to cover the round trip. */
  executeSlackMs?: number;
  /** Used for execute when the environment is unknown to this client (no ensure seen yet). */
  defaultExecuteTimeoutMs?: number;
  /**
   * Removing a container and its volume takes a second or two; a runner that has not answered by then
   * is hung or gone, and the caller retries later rather than wait on it.
   */
  releaseTimeoutMs?: number;
};

export interface SandboxClient {
  /** Creates, restarts or adopts the session's sandbox; the response names the runner holding it. */
  ensureSandbox(args: {
    tenantId: string;
    sessionId: string;
    environment: EnvironmentConfig;
    agentId?: string;
  }): Promise<SandboxEnsureResponse>;
  /**
   * Runs one tool call (idempotent per toolCallId). An aborted `signal` interrupts the call: the
   * runner kills its process group, and the call resolves with its (interrupted) result.
   */
  execute(args: {
    tenantId: string;
    sessionId: string;
    toolCallId: string;
    tool: SandboxToolName;
    input: unknown;
    approved?: boolean;
    /** The wake making the call: the author of what it writes to the agent's substrate. */
    wakeId?: string;
    signal?: AbortSignal;
  }): Promise<SandboxExecuteResponse>;
  /** Removes the session's container, workspace and records (session terminated). */
  release(sessionId: string, tenantId?: string): Promise<SandboxReleaseResponse>;
  describe(sessionId: string): Promise<SandboxDescribeResponse>;
  /**
   * Attaches to the session's MCP stdio server process (started when none runs) on the runner holding
   * the sandbox; its output arrives on `sandboxMcpSubject(attachment)`. Ensure the sandbox first.
   */
  mcpOpen(request: SandboxMcpOpenRequest): Promise<SandboxMcpOpenResponse>;
  /** Writes one JSON-RPC message to the attached process's stdin. */
  mcpSend(request: SandboxMcpSendRequest): Promise<void>;
  /** Detaches; the process keeps running for the session's next attachment. */
  mcpClose(request: SandboxMcpCloseRequest): Promise<void>;
}

type Route = { runnerId: string; timeoutMs: number };

/**
 * The harness side of the sandbox service. `ensure` goes to the runner queue group; its answer pins
 * the session to one runner, and later calls for that session go to that runner's own subjects.
 * A session this client has not ensured (e.g. after a harness restart) is sent to the queue group,
 * where a runner answers only for sessions it holds, so callers should `ensureSandbox` first.
 */
export function createSandboxClient(
  bus: Pick<Bus, "request">,
  options: SandboxClientOptions = {},
): SandboxClient {
  const routes = new Map<string, Route>();
  const ensureTimeoutMs = options.ensureTimeoutMs ?? 60_000;
  const slackMs = options.executeSlackMs ?? 15_000;
  const defaultExecuteTimeoutMs = options.defaultExecuteTimeoutMs ?? 135_000;
  const releaseTimeoutMs = options.releaseTimeoutMs ?? 15_000;

  const serviceFor = (sessionId: string) => {
    const route = routes.get(sessionId);
    return route ? pinnedSandboxService(route.runnerId) : sandboxService;
  };

  return {
    async ensureSandbox({ tenantId, sessionId, environment, agentId }) {
      const known = routes.get(sessionId);
      const service = known ? pinnedSandboxService(known.runnerId) : sandboxService;
      const body = {
        tenant_id: tenantId,
        session_id: sessionId,
        environment,
        ...(agentId ? { agent_id: agentId } : {}),
      };
      let response: SandboxEnsureResponse;
      try {
        response = await bus.request(service, "ensure", body, { timeoutMs: ensureTimeoutMs });
      } catch (error) {
        // The pinned runner is gone: its container went with it, so any runner may provision anew.
        if (!(known && error instanceof WakeloopError && error.code === "bus_no_responders")) throw error;
        routes.delete(sessionId);
        response = await bus.request(sandboxService, "ensure", body, { timeoutMs: ensureTimeoutMs });
      }
      routes.set(sessionId, {
        runnerId: response.runner_id,
        timeoutMs: environment.command_timeout_ms + slackMs,
      });
      return response;
    },

    async execute({ tenantId, sessionId, toolCallId, tool, input, approved, wakeId, signal }) {
      const service = serviceFor(sessionId);
      const timeoutMs = routes.get(sessionId)?.timeoutMs ?? defaultExecuteTimeoutMs;
      const onAbort = () => {
        bus
          .request(
            service,
            "cancel",
            { tenant_id: tenantId, session_id: sessionId, tool_call_id: toolCallId },
            { timeoutMs: 5_000 },
          )
          .catch(() => undefined); // the call's own reply reports what happened
      };
      if (signal?.aborted) onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        return await bus.request(
          service,
          "execute",
          {
            tenant_id: tenantId,
            session_id: sessionId,
            tool_call_id: toolCallId,
            tool,
            input,
            approved: approved ?? false,
            ...(wakeId !== undefined && { wake_id: wakeId }),
          },
          { timeoutMs },
        );
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    },

    async release(sessionId, tenantId) {
      const service = serviceFor(sessionId);
      routes.delete(sessionId);
      return bus.request(
        service,
        "release",
        { session_id: sessionId, ...(tenantId ? { tenant_id: tenantId } : {}) },
        { timeoutMs: releaseTimeoutMs },
      );
    },

    describe(sessionId) {
      return bus.request(serviceFor(sessionId), "describe", { session_id: sessionId });
    },

    mcpOpen(request) {
      // Starting a process is a `docker exec` or two: seconds on a loaded host.
      return bus.request(serviceFor(request.session_id), "mcp_open", request, { timeoutMs: 30_000 });
    },

    async mcpSend(request) {
      await bus.request(serviceFor(request.session_id), "mcp_send", request, { timeoutMs: 15_000 });
    },

    async mcpClose(request) {
      await bus.request(serviceFor(request.session_id), "mcp_close", request, { timeoutMs: 5_000 });
    },
  };
}
