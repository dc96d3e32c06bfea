import { SYSTEM_PROGRAM_DIRS } from "@wakeloop/sandbox-client";
import { describe, expect, it } from "vitest";
import { BASE_ENV } from "./base-env";

describe("BASE_ENV", () => {
  // A bare allowlist entry (`git`) also matches `/usr/bin/git` because bash finds `git` through this
  // PATH; the two lists must name the same directories or the exec policy matches the wrong programs.
  it("has the PATH the exec policy's bare entries resolve through", () => {
    expect(BASE_ENV.PATH?.split(":")).toEqual([...SYSTEM_PROGRAM_DIRS]);
  });
});
