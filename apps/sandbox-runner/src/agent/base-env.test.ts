import { createRequire } from "node:module";
import { SYSTEM_PROGRAM_DIRS } from "@wakeloop/sandbox-client";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const { BASE_ENV } = require("./base-env.cjs") as { BASE_ENV: Record<string, string> };

describe("BASE_ENV", () => {
  // A bare allowlist entry (`git`) also matches `/usr/bin/git` because bash finds `git` through this
  // PATH; the two lists must name the same directories or the exec policy matches the wrong programs.
  it("has the PATH the exec policy's bare entries resolve through", () => {
    expect(BASE_ENV.PATH?.split(":")).toEqual([...SYSTEM_PROGRAM_DIRS]);
  });
});
