import { randomBytes } from "node:crypto";
import { type McpFixture, startMcpFixture } from "./mcp-fixture";
import { Platform, type PlatformOptions } from "./platform";

export interface McpPlatform {
  platform: Platform;
  fixture: McpFixture;
  /** The fixture's bearer token, stored in the tenant's vault as `fixture_token`. */
  token: string;
}

/**
 * A platform whose workers may reach a token-protected MCP fixture (it listens on 127.0.0.1: allowing
 * that is the operator's explicit decision), with the token in the tenant's vault as `fixture_token`.
 * The caller stops both.
 */
export async function startMcpPlatform(options: PlatformOptions = {}): Promise<McpPlatform> {
  const token = `mcp-secret-${randomBytes(12).toString("hex")}`;
  const fixture = await startMcpFixture({ token });
  let platform: Platform | undefined;
  try {
    platform = await Platform.start({
      ...options,
      workerEnv: { MCP_ALLOWED_HOSTS: "127.0.0.1", ...options.workerEnv },
    });
    const stored = await platform.request("PUT", "/v1/vault/secrets/fixture_token", { value: token });
    if (stored.status !== 200) throw new Error(`vault: ${stored.status} ${JSON.stringify(stored.body)}`);
    return { platform, fixture, token };
  } catch (error) {
    await platform?.stop();
    await fixture.close();
    throw error;
  }
}

/** The fixture as an agent's MCP server named `fixture`, authorized with the vault's `fixture_token`. */
export function mcpFixtureServer(fixture: McpFixture, fields: Record<string, unknown> = {}) {
  return {
    type: "url",
    name: "fixture",
    url: fixture.url,
    headers: { Authorization: { secret: "fixture_token", prefix: "Bearer " } },
    ...fields,
  };
}
