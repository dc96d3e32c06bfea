import type { Bus, ServiceHandle } from "@wakeloop/bus";
import { type SandboxReleaseRequest, type SandboxReleaseResponse, WakeloopError } from "@wakeloop/contracts";
import { sandboxService } from "./sandbox-service";

/**
 * A sandbox-runner stand-in for tests of what releases sandboxes: it serves the real `sandbox`
 * service on `bus`, records each release request and answers it with `answer`; any other action is
 * refused, since no such test needs one.
 */
export function serveReleaseStandIn(
  bus: Bus,
  answer: () => Promise<SandboxReleaseResponse>,
): { requests: SandboxReleaseRequest[]; handle: ServiceHandle } {
  const requests: SandboxReleaseRequest[] = [];
  const unused = () => Promise.reject(new WakeloopError("not_in_this_test", "not used by this test"));
  const handle = bus.serve(sandboxService, {
    ensure: unused,
    execute: unused,
    cancel: unused,
    describe: unused,
    mcp_open: unused,
    mcp_send: unused,
    mcp_close: unused,
    release: async (request) => {
      requests.push(request);
      return answer();
    },
  });
  return { requests, handle };
}
