export * from "./app-process";
export * from "./database";
export * from "./docker";
export * from "./latency";
export * from "./nats";
export * from "./platform";
export * from "./tcp-proxy";
