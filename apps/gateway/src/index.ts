export type { Clock, GatewayDeps, GatewayServerConfig } from "./gateway-deps";
export { createGatewayServer, type GatewayServer } from "./server";
export { type CreatedTenant, createTenant } from "./tenants/create-tenant";
