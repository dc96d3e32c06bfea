import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCliEnv } from "./config";
import { loginFile, readLogin, resolveConnection, writeLogin } from "./login-store";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "wl-cli-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe("the stored login", () => {
  it("lives under $XDG_CONFIG_HOME/wakeloop, or ~/.config/wakeloop", () => {
    expect(loginFile(parseCliEnv({ XDG_CONFIG_HOME: "/x", HOME: "/h" }))).toBe("/x/wakeloop/config.json");
    expect(loginFile(parseCliEnv({ XDG_CONFIG_HOME: "", HOME: "/h" }))).toBe(
      "/h/.config/wakeloop/config.json",
    );
  });

  it("is written readable by its owner only and read back", async () => {
    const file = loginFile(parseCliEnv({ XDG_CONFIG_HOME: home }));
    await writeLogin(file, { url: "http://gw:8080", api_key: "wl_secret" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(file, ".."))).mode & 0o777).toBe(0o700);
    expect(await readLogin(file)).toEqual({ url: "http://gw:8080", api_key: "wl_secret" });
    await writeLogin(file, { url: "http://other", api_key: "k2" });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ url: "http://other", api_key: "k2" });
  });

  it("is null when missing and a clear error when damaged", async () => {
    const file = join(home, "config.json");
    expect(await readLogin(file)).toBeNull();
    await writeFile(file, "{oops");
    await expect(readLogin(file)).rejects.toThrow(/is not JSON: run `wakeloop login`/);
    await writeFile(file, JSON.stringify({ url: "not a url", api_key: "" }));
    await expect(readLogin(file)).rejects.toThrow(/not a valid login[\s\S]*url: [\s\S]*api_key: /);
  });
});

describe("resolveConnection", () => {
  const stored = { url: "http://stored", api_key: "stored-key" };

  it("lets WAKELOOP_URL and WAKELOOP_API_KEY override the stored login, each on its own", () => {
    expect(resolveConnection(parseCliEnv({}), stored)).toEqual({
      baseUrl: "http://stored",
      apiKey: "stored-key",
    });
    expect(resolveConnection(parseCliEnv({ WAKELOOP_API_KEY: "env-key" }), stored)).toEqual({
      baseUrl: "http://stored",
      apiKey: "env-key",
    });
    expect(
      resolveConnection(parseCliEnv({ WAKELOOP_URL: "http://env", WAKELOOP_API_KEY: "k" }), null),
    ).toEqual({
      baseUrl: "http://env",
      apiKey: "k",
    });
  });

  it("says how to log in when nothing is given", () => {
    expect(() => resolveConnection(parseCliEnv({}), null)).toThrow(/run `wakeloop login`/);
  });

  it("refuses a WAKELOOP_URL that is not a URL", () => {
    expect(() => parseCliEnv({ WAKELOOP_URL: "gw:8080" })).toThrow(
      /invalid environment:\n {2}WAKELOOP_URL: /,
    );
  });
});
