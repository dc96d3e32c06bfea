import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";

describe("worker config", () => {
  it("sizes for I/O-bound wakes by default, and the Postgres pool from the slots", () => {
    const config = loadConfig({});
    expect(config.WORKER_SLOTS).toBe(256);
    expect(config.DATABASE_POOL_MAX).toBe(16);
  });

  it("keeps pg's 10 connections for few slots, caps them at 32, and takes an explicit pool size", () => {
    expect(loadConfig({ WORKER_SLOTS: "4" }).DATABASE_POOL_MAX).toBe(10);
    expect(loadConfig({ WORKER_SLOTS: "600" }).DATABASE_POOL_MAX).toBe(32);
    expect(loadConfig({ WORKER_SLOTS: "4000" }).DATABASE_POOL_MAX).toBe(32);
    expect(loadConfig({ WORKER_SLOTS: "600", DATABASE_POOL_MAX: "5" }).DATABASE_POOL_MAX).toBe(5);
  });
});
