import { ToolPolicy } from "@wakeloop/contracts";
import { z } from "zod";
import { hostList } from "./provider-settings-env";

/** A variable holding JSON that `schema` reads; unset, `{}`. */
export function jsonEnv<S extends z.ZodType>(schema: S) {
  return z
    .string()
    .default("{}")
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/**
 * The platform's tool settings. The harness workers apply them and the gateway's `/tools` explains
 * them, so both read them from the same variables: deploy both with the same values.
 */
export const ToolSettingsEnv = z.object({
  GLOBAL_TOOL_POLICY: jsonEnv(ToolPolicy).describe(
    "The platform's tool policy (JSON: profile, tool_names, allow, also_allow, deny, by_provider)",
  ),
  MAX_SUBSESSION_DEPTH: z.coerce
    .number()
    .int()
    .min(0)
    .default(3)
    .describe("Sessions this deep may not spawn sub-sessions (a root session is depth 0)"),
  MAX_CHILDREN_PER_SESSION: z.coerce
    .number()
    .int()
    .min(0)
    .default(10)
    .describe("Sub-sessions one session may spawn; past it the spawning tools leave its tool set"),
  MAX_SCHEDULED_TASKS_PER_AGENT: z.coerce
    .number()
    .int()
    .min(0)
    .default(50)
    .describe("Unfinished scheduled tasks one agent may have, created by its tools or through the API"),
  SANDBOX_BROWSER_IMAGES: hostList("wakeloop-sandbox-browser:bookworm").describe(
    "Comma-separated sandbox images that carry Chromium (infra/sandbox-image.sh browser); the browser_* tools are offered only to sessions whose environment uses one",
  ),
  WEB_SEARCH_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "Root of a SearXNG instance with format=json enabled, for web_search; unset: web_search is not offered",
    ),
});
