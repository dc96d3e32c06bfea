export { CredentialCipher, type CredentialKey, type SealedSecret } from "./credential-cipher";
export {
  deleteProviderCredential,
  listProviderCredentials,
  putProviderCredential,
  readProviderCredential,
} from "./credential-store";
export { deleteVaultSecret, listVaultSecrets, openVaultSecrets, putVaultSecret } from "./vault-store";
