import { describe, expect, it } from "vitest";
import { parseInspectionCommand } from "./inspection-command";

describe("parseInspectionCommand", () => {
  it("turns an inspection command into an argv, removing quotes", () => {
    expect(parseInspectionCommand(`rg -n "two words" src`)).toEqual({
      ok: true,
      argv: ["rg", "-n", "two words", "src"],
    });
    expect(parseInspectionCommand("wc -l 'a b.txt'")).toEqual({ ok: true, argv: ["wc", "-l", "a b.txt"] });
  });

  it("refuses shell syntax", () => {
    for (const command of [
      "ls | sh",
      "ls; rm x",
      "cat a && cat b",
      "echo $(id)",
      "ls > f",
      "cat < f",
      "ls &",
      "ls $HOME",
      "ls *.ts",
      "LD_PRELOAD=/workspace/x.so ls",
    ]) {
      expect(parseInspectionCommand(command), command).toMatchObject({ ok: false, code: "bash_not_a_shell" });
    }
  });

  it("refuses programs outside the list and options that write or run programs", () => {
    expect(parseInspectionCommand("python3 -c 1")).toMatchObject({
      ok: false,
      code: "bash_program_not_allowed",
    });
    expect(parseInspectionCommand("/bin/ls")).toMatchObject({ ok: false, code: "bash_program_not_allowed" });
    for (const command of [
      "find . -fprint out",
      "find . -delete",
      "rg --pre=sh x",
      "sort -o out in",
      "sort --output=x in",
      // Issue #30: GNU getopt's abbreviations and clusters reach the same options.
      "sort -S 1k --compress-prog=sh FILE",
      "sort -uo FILE",
      "sort --outp=x FILE",
      "sort -T /workspace FILE",
      "rg -z x",
      "tail -f FILE",
      "uniq FILE OUT",
    ]) {
      expect(parseInspectionCommand(command), command).toMatchObject({
        ok: false,
        code: "bash_option_not_allowed",
      });
    }
    expect(parseInspectionCommand("find . -name '*.ts'")).toMatchObject({ ok: true });
  });
});
