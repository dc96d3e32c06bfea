import type { Bus, ServiceHandle } from "@wakeloop/bus";
import {
  type SandboxMcpCloseRequest,
  type SandboxMcpOpenRequest,
  type SandboxMcpSendRequest,
  type SandboxStatusNotice,
  SubstrateChangedNotice,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  pinnedSandboxService,
  sandboxMcpSubject,
  sandboxService,
  sandboxStatusSubject,
  substrateChangedSubject,
} from "@wakeloop/sandbox-client";
import { SandboxManager, type SandboxManagerOptions } from "./sandbox-manager";

export type SandboxServiceOptions = Omit<SandboxManagerOptions, "onStatus"> & {
  bus: Pick<Bus, "serve" | "nc" | "subjects">;
};

export type SandboxRunner = {
  manager: SandboxManager;
  stop(): Promise<void>;
};

/**
 * The runner on the bus. The `sandbox` queue group takes a new session's `ensure` (any runner may
 * provision it); `sandbox-<runnerId>` takes every call for sessions this runner holds, which is
 * where clients send them once `ensure` named the runner. A call on the shared subjects for a
 * session this runner does not hold fails with `sandbox_not_found`.
 * Status changes go out as core-NATS notices on `<p>.sandbox.status.<session>`; substrate changes
 * (`<p>.sandbox.substrate`, from any runner or the gateway) make it sync the agent's mirror.
 */
export async function startSandboxService(options: SandboxServiceOptions): Promise<SandboxRunner> {
  const { bus, ...managerOptions } = options;
  const log = options.log;
  const publishStatus = (notice: SandboxStatusNotice) => {
    try {
      bus.nc.publish(sandboxStatusSubject(bus.subjects.prefix, notice.session_id), JSON.stringify(notice));
    } catch (error) {
      log.warn({ err: error, sessionId: notice.session_id }, "could not publish a sandbox status notice");
    }
    log.info({ sessionId: notice.session_id, status: notice.status, error: notice.error }, "sandbox status");
  };
  const manager = new SandboxManager({
    ...managerOptions,
    onStatus: publishStatus,
    onMcpFrame: (attachment, frame) => {
      try {
        bus.nc.publish(sandboxMcpSubject(bus.subjects.prefix, attachment), JSON.stringify(frame));
      } catch (error) {
        // The worker's request then times out, which its MCP client reports.
        log.warn({ err: error, attachment }, "could not publish an MCP stdio frame");
      }
    },
    // Room for the frame's envelope within what the server accepts.
    ...(bus.nc.info !== undefined && { mcpMaxFrameBytes: bus.nc.info.max_payload - 4096 }),
  });
  await manager.start();

  const held = (sessionId: string) => {
    if (!manager.holds(sessionId)) {
      throw new WakeloopError(
        "sandbox_not_found",
        `runner ${manager.runnerId} holds no sandbox for session ${sessionId}; call ensure first`,
      );
    }
  };
  const handlers = {
    ensure: (request: Parameters<SandboxManager["ensure"]>[0]) => manager.ensure(request),
    execute: (request: { session_id: string }) => {
      held(request.session_id);
      return manager.execute(request);
    },
    cancel: async (request: { tenant_id: string; session_id: string; tool_call_id: string }) => ({
      cancelled: await manager.cancel(request.tenant_id, request.session_id, request.tool_call_id),
    }),
    release: async (request: { tenant_id?: string; session_id: string }) => ({
      released: await manager.release(request.session_id, request.tenant_id),
    }),
    describe: async (request: { session_id: string }) => manager.describe(request.session_id),
    mcp_open: (request: SandboxMcpOpenRequest) => manager.mcpOpen(request),
    mcp_send: async (request: SandboxMcpSendRequest) => {
      await manager.mcpSend(request);
      return { sent: true as const };
    },
    mcp_close: async (request: SandboxMcpCloseRequest) => ({ closed: await manager.mcpClose(request) }),
  };
  const handles: ServiceHandle[] = [
    bus.serve(sandboxService, handlers),
    bus.serve(pinnedSandboxService(manager.runnerId), handlers),
  ];
  const substrateNotices = bus.nc.subscribe(substrateChangedSubject(bus.subjects.prefix), {
    callback: (error, message) => {
      if (error) return;
      const notice = SubstrateChangedNotice.safeParse(parseJson(message.string()));
      if (!notice.success) {
        log.warn({ subject: message.subject }, "dropped a substrate notice that is not one");
        return;
      }
      const { tenant_id, agent_id } = notice.data;
      manager.refreshSubstrate(tenant_id, agent_id).catch((failure: unknown) => {
        log.warn({ err: failure, agentId: agent_id }, "could not sync the agent's substrate");
      });
    },
  });
  log.info({ runnerId: manager.runnerId }, "sandbox service started");

  return {
    manager,
    async stop() {
      substrateNotices.unsubscribe();
      await Promise.all(handles.map((handle) => handle.stop()));
      await manager.stop();
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
