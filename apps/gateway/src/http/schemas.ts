import {
  AgentPage,
  AgentVersionPage,
  ApiKey,
  ApiKeyPage,
  apiSchemas,
  CreateApiKeyRequest,
  CreatedApiKey,
  EnvironmentPage,
  ProviderCredential,
  ProviderCredentialList,
  PutProviderCredentialRequest,
  SessionPage,
  TraceResponse,
} from "@wakeloop/contracts";
import { EffectiveToolSet } from "@wakeloop/tool-runtime";

/**
 * Every named body the API reads or returns. Routes name their bodies from here, so the OpenAPI
 * document describes exactly the schemas the handlers parse with.
 */
export const gatewaySchemas = {
  ...apiSchemas,
  CreateApiKeyRequest,
  ApiKey,
  CreatedApiKey,
  ApiKeyPage,
  AgentPage,
  AgentVersionPage,
  EnvironmentPage,
  SessionPage,
  TraceResponse,
  EffectiveToolSet,
  PutProviderCredentialRequest,
  ProviderCredential,
  ProviderCredentialList,
} as const;

export type GatewaySchemaName = keyof typeof gatewaySchemas;
export type GatewaySchemas = typeof gatewaySchemas;
