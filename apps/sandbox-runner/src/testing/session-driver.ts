import { randomBytes } from "node:crypto";
import type {
  EnvironmentConfig,
  SandboxExecuteCompleted,
  SandboxExecuteResponse,
  SandboxToolName,
} from "@wakeloop/contracts";
import type { ApprovalCheck } from "../committed-allow";
import type { SandboxManager } from "../sandbox-manager";
import { testEnvironment } from "./docker-fixture";

/**
 * The allows "committed" by test drivers: a driver sending `approved: true` records the allow first,
 * as the harness sends `approved` only after the `user.tool_confirmation` is in Postgres. The Postgres
 * check itself (committed-allow.ts) is exercised by test/security/sandbox.security.test.ts.
 */
const committedAllows = new Set<string>();
const allowKey = (tenantId: string, sessionId: string, toolCallId: string) =>
  `${tenantId}/${sessionId}/${toolCallId}`;

export const testApprovals: ApprovalCheck = async ({ tenantId, sessionId, toolCallId }) =>
  committedAllows.has(allowKey(tenantId, sessionId, toolCallId));

/** Drives one session's sandbox the way the harness does: ensure, then tool calls with fresh ids. */
export class SessionDriver {
  private calls = 0;
  private readonly callPrefix = randomBytes(4).toString("hex");

  constructor(
    readonly manager: SandboxManager,
    readonly sessionId = `sesn_${randomBytes(6).toString("hex")}`,
    readonly environment: EnvironmentConfig = testEnvironment(),
    /** A tenant of the test's database when the runner reads Postgres (substrates). */
    readonly tenantId = "tnt_test",
  ) {}

  ensure(agentId?: string) {
    return this.manager.ensure({
      tenant_id: this.tenantId,
      session_id: this.sessionId,
      environment: this.environment,
      ...(agentId ? { agent_id: agentId } : {}),
    });
  }

  nextCallId(): string {
    this.calls += 1;
    return `tcall_${this.callPrefix}_${this.calls}`;
  }

  call(
    tool: SandboxToolName,
    input: unknown,
    options: { approved?: boolean; callId?: string } = {},
  ): Promise<SandboxExecuteResponse> {
    const callId = options.callId ?? this.nextCallId();
    const approved = options.approved ?? true;
    if (approved) committedAllows.add(allowKey(this.tenantId, this.sessionId, callId));
    return this.manager.execute({
      tenant_id: this.tenantId,
      session_id: this.sessionId,
      tool_call_id: callId,
      tool,
      input,
      approved,
    });
  }

  /** A completed call's text; fails the test on needs_approval. */
  async run(tool: SandboxToolName, input: unknown, options: { approved?: boolean; callId?: string } = {}) {
    const response = await this.call(tool, input, options);
    if (response.outcome !== "completed") throw new Error(`${tool} needs approval: ${response.reason}`);
    return { ...response, text: textOf(response) };
  }
}

export function textOf(response: SandboxExecuteCompleted): string {
  return response.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}
