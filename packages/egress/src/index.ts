export { type AddressClass, classifyAddress, isIpLiteral } from "./address-class";
export { EgressError, type EgressErrorCode, type EgressErrorDetails, findEgressError } from "./egress-error";
export {
  checkAddress,
  checkEgressUrl,
  type EgressPolicy,
  isAllowedHost,
  normalizeHost,
} from "./egress-policy";
export {
  createGuardedDispatcher,
  type GuardedDispatcherOptions,
  type ResolveHost,
  resolveAllowedAddress,
  resolveWithSystem,
} from "./guarded-dispatcher";
export { createGuardedFetch, type Fetch, type GuardedFetchOptions } from "./guarded-fetch";
