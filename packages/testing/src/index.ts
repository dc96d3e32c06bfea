export * from "./app-process";
export * from "./database";
export * from "./nats";
export * from "./platform";
