export * from "./database";
export * from "./nats";
export * from "./app-process";
export * from "./platform";
