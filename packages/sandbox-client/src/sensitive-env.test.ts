import { describe, expect, it } from "vitest";
import { isSensitiveEnvName } from "./sensitive-env";

describe("isSensitiveEnvName", () => {
  it("flags variables that choose programs, preloaded code or config files", () => {
    const sensitive = [
      "PATH",
      "LD_PRELOAD",
      "LD_LIBRARY_PATH",
      "BASH_ENV",
      "ENV",
      "RIPGREP_CONFIG_PATH",
      "GIT_CONFIG_GLOBAL",
      "GIT_SSH_COMMAND",
      "GIT_EXTERNAL_DIFF",
      "PROMPT_COMMAND",
      "NODE_OPTIONS",
      "PYTHONSTARTUP",
      "PYTHONPATH",
      "npm_config_script_shell",
      "PERL5OPT",
      "HOME",
      "XDG_CONFIG_HOME",
      "PAGER",
      "EDITOR",
      "PS4",
      "SHELLOPTS",
      "JAVA_TOOL_OPTIONS",
      "GOFLAGS",
    ];
    for (const name of sensitive) expect(isSensitiveEnvName(name), name).toBe(true);
  });

  it("leaves ordinary variables alone", () => {
    for (const name of ["GREETING", "DEBUG", "LANG", "TZ", "CI", "COUNT"])
      expect(isSensitiveEnvName(name), name).toBe(false);
  });
});
