import type { CredentialKey } from "@wakeloop/provider-credentials";
import { z } from "zod";

/** `a.example, b.example` → `["a.example", "b.example"]`; unset is `fallback`'s list (empty by default). */
export const hostList = (fallback = "") =>
  z
    .string()
    .default(fallback)
    .transform((text) =>
      text
        .split(",")
        .map((host) => host.trim())
        .filter((host) => host !== ""),
    );

const KEY_BYTES = 32;

/**
 * The platform's rules for where model requests may go and which key they carry. The gateway applies
 * them when an agent is saved and the harness workers again at every request, so both read them from
 * the same variables: deploy both with the same values.
 */
export const ProviderSettingsEnv = z.object({
  EGRESS_ALLOWED_HOSTS: hostList().describe(
    "Hosts workers may reach on internal addresses (loopback, private, link-local), e.g. a local vLLM; comma-separated",
  ),
  MODEL_BASE_URL_ALLOWED_HOSTS: hostList().describe(
    "Hosts an anthropic/openai agent's base_url may name; they receive the platform's provider keys; comma-separated",
  ),
  OPENAI_COMPATIBLE_KEY_HOSTS: hostList().describe(
    "openai_compatible hosts that receive OPENAI_COMPATIBLE_API_KEY; other hosts get no platform key; comma-separated",
  ),
  EGRESS_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(33_554_432)
    .describe("Largest response body a worker reads from a model server or other outside host"),
  PROVIDER_CREDENTIAL_KEYS: z
    .string()
    .default("")
    .transform((text, ctx): CredentialKey[] => {
      const keys: CredentialKey[] = [];
      for (const entry of text.split(",").map((part) => part.trim())) {
        if (entry === "") continue;
        const [id = "", encoded = ""] = entry.split(":");
        const key = Buffer.from(encoded, "base64");
        const duplicate = keys.some((known) => known.id === id);
        if (!/^[A-Za-z0-9_-]{1,32}$/.test(id) || key.length !== KEY_BYTES || duplicate) {
          // Never echo the entry: it is key material.
          ctx.addIssue({
            code: "custom",
            message: `entry ${keys.length + 1} is not <id>:<base64 of 32 bytes> with an id of its own`,
          });
          return z.NEVER;
        }
        keys.push({ id, key });
      }
      return keys;
    })
    .describe(
      "Keys that encrypt tenants' provider credentials, `id:base64(32 bytes)` comma-separated; the first encrypts, all decrypt (rotation); unset disables tenant credentials",
    ),
});
export type ProviderSettings = z.output<typeof ProviderSettingsEnv>;
