export * from "./app-process";
export * from "./database";
export * from "./docker";
export * from "./latency";
export * from "./local-nats-server";
export * from "./nats";
export * from "./platform";
export * from "./tcp-proxy";
