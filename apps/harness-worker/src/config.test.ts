import { checkConfig } from "@wakeloop/service-kit";
import { describe, expect, it } from "vitest";
import { HarnessWorkerEnv, loadConfig } from "./config";

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

  it("offers web_search only with a search backend, and names a bad one", () => {
    const config = loadConfig({});
    expect(config.WEB_SEARCH_URL).toBeUndefined();
    expect(config.WEB_FETCH_ALLOWED_HOSTS).toEqual([]);
    expect(config.WEB_FETCH_MAX_CHARS).toBe(100_000);
    expect(loadConfig({ WEB_SEARCH_URL: "http://searxng:8080/" }).WEB_SEARCH_URL).toBe(
      "http://searxng:8080/",
    );
    const bad = checkConfig(HarnessWorkerEnv, { WEB_SEARCH_URL: "ftp://search.example/" });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? [] : bad.problems).toEqual([expect.stringMatching(/^WEB_SEARCH_URL: .*SearXNG/)]);
  });
});
