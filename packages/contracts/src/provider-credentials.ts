import { z } from "zod";
import { ModelConfig } from "./api";
import { Timestamp } from "./ids";

/**
 * A tenant's own key for a model provider. Write-only: the API stores it encrypted and only ever
 * answers with this metadata, never the key.
 */

/** The providers an agent's model can name (tool policies know more, such as gemini). */
export const CredentialProvider = ModelConfig.shape.provider;
export type CredentialProvider = z.infer<typeof CredentialProvider>;

export const PutProviderCredentialRequest = z.strictObject({
  api_key: z.string().min(1).max(8_192),
});
export type PutProviderCredentialRequest = z.input<typeof PutProviderCredentialRequest>;

export const ProviderCredential = z.object({
  provider: CredentialProvider,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type ProviderCredential = z.infer<typeof ProviderCredential>;

export const ProviderCredentialList = z.object({ data: z.array(ProviderCredential) });
export type ProviderCredentialList = z.infer<typeof ProviderCredentialList>;
