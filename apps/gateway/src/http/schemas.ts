import {
  AgentPage,
  AgentVersionDiff,
  AgentVersionPage,
  ApiKey,
  ApiKeyPage,
  apiSchemas,
  CreateApiKeyRequest,
  CreatedApiKey,
  DeletedScheduledTask,
  EnvironmentPage,
  MemoryEntry,
  MemoryEntryList,
  MemoryStoreList,
  MemoryVersion,
  MemoryVersionList,
  ProviderCredential,
  ProviderCredentialList,
  PutMemoryEntryRequest,
  PutProviderCredentialRequest,
  PutVaultSecretRequest,
  RollbackAgentRequest,
  ScheduledTaskList,
  SessionPage,
  TraceResponse,
  VaultSecret,
  VaultSecretList,
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
  AgentVersionDiff,
  RollbackAgentRequest,
  EnvironmentPage,
  SessionPage,
  TraceResponse,
  EffectiveToolSet,
  PutProviderCredentialRequest,
  ProviderCredential,
  ProviderCredentialList,
  PutVaultSecretRequest,
  VaultSecret,
  VaultSecretList,
  ScheduledTaskList,
  DeletedScheduledTask,
  MemoryStoreList,
  MemoryEntry,
  MemoryEntryList,
  MemoryVersion,
  MemoryVersionList,
  PutMemoryEntryRequest,
} as const;

export type GatewaySchemaName = keyof typeof gatewaySchemas;
export type GatewaySchemas = typeof gatewaySchemas;
