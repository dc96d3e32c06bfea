import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateExecPolicy } from "./exec-policy";

// Commands generated from a small shell grammar, each tagged with whether it runs only allowlisted
// programs in plain form. Whatever shell syntax is generated around an allowlisted program, the
// policy may say `allow` only for a command the tag says is on the list.

const ALLOWLIST = ["git", "ls -la", "/usr/bin/env"];
const policy = { exec_security: "allowlist", exec_ask: "on-miss", exec_allowlist: ALLOWLIST } as const;

type Gen = { text: string; allowed: boolean };

const onList = fc.constantFrom<Gen>(
  { text: "git status", allowed: true },
  { text: "git log --oneline", allowed: true },
  { text: "/usr/bin/git diff", allowed: true },
  { text: "'git' \"push\"", allowed: true },
  { text: "ls -la /workspace", allowed: true },
  { text: "/usr/bin/env true", allowed: true },
);
const offList = fc.constantFrom<Gen>(
  { text: "rm -rf /", allowed: false },
  { text: "sh -c id", allowed: false },
  { text: "ls /", allowed: false },
  { text: "./git status", allowed: false },
  { text: "bin/git status", allowed: false },
  { text: "/workspace/git status", allowed: false },
  { text: "/usr/bin/../../workspace/git", allowed: false },
  { text: "/usr/bin/env2", allowed: false },
  { text: "g?t status", allowed: false },
  { text: "{git,rm} x", allowed: false },
  { text: "$GIT status", allowed: false },
  { text: "eval git status", allowed: false },
  { text: "export PATH=/workspace", allowed: false },
);
const word = fc.constantFrom("x", "'a b'", '"$HOME"', "*.txt", "--flag=1", "$X");

const simple: fc.Arbitrary<Gen> = fc.oneof(
  onList,
  offList,
  fc.tuple(onList, fc.array(word, { maxLength: 3 })).map(([cmd, words]) => ({
    text: [cmd.text, ...words].join(" "),
    allowed: cmd.allowed,
  })),
);

/** Syntax that always makes the command something the allowlist cannot vouch for. */
const wrap = (inner: string): fc.Arbitrary<string> =>
  fc.constantFrom(
    `(${inner})`,
    `{ ${inner}; }`,
    `git status $(${inner})`,
    `git status "\`${inner}\`"`,
    `git status <(${inner})`,
    `${inner} > /workspace/out`,
    `> ${inner}`,
    `${inner} 2>&1`,
    `PAGER=cat ${inner}`,
    `f() { ${inner}; }`,
    `git status $((1+1)) && ${inner}`,
    `${inner} <<EOF\nhello\nEOF`,
    `git status \${X@P} && ${inner}`,
    `coproc ${inner}`,
    `time ${inner}`,
    `if true; then ${inner}; fi`,
    `while false; do ${inner}; done`,
    `[[ -n x ]] && ${inner}`,
  );

const command: fc.Arbitrary<Gen> = fc.letrec<{ cmd: Gen }>((tie) => ({
  cmd: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    simple,
    fc
      .tuple(tie("cmd"), fc.constantFrom(" ; ", " && ", " || ", " | ", " |& ", " & ", "\n"), tie("cmd"))
      .map(([a, op, b]) => ({ text: `${a.text}${op}${b.text}`, allowed: a.allowed && b.allowed })),
    tie("cmd").chain((inner) => wrap(inner.text).map((text) => ({ text, allowed: false }))),
  ),
})).cmd;

describe("exec policy property", () => {
  it("never allows a generated command that runs anything off the allowlist or in a form it cannot check", () => {
    fc.assert(
      fc.property(command, (generated) => {
        const verdict = evaluateExecPolicy(policy, generated.text);
        expect(verdict, generated.text).toBe(generated.allowed ? "allow" : "ask");
      }),
      { numRuns: 2_000 },
    );
  });

  it("never allows unquoted text soup unless every command in it starts with the allowlisted program", () => {
    // No quotes or escapes here (the grammar above covers them), so the text can be checked plainly.
    const pieces = fc.constantFrom(
      ..."git status rm ./ / .. -rf = * ? [ ] ~ # ! $ ; & | > < ( ) { } ` $( ${ << (( x= \n".split(" "),
      " ",
    );
    const onlyGit = { ...policy, exec_allowlist: ["git"] };
    fc.assert(
      fc.property(fc.array(pieces, { minLength: 1, maxLength: 12 }), (parts) => {
        const text = parts.join("");
        if (evaluateExecPolicy(onlyGit, text) !== "allow") return;
        const code = text.replace(/(^|[\s;&|])#.*$/gm, "$1");
        // `{` and `}` are plain characters in an argument (a brace group fails the first-word check),
        // and `${name}` is a plain expansion; `${` with anything else is an operator.
        expect(code, text).not.toMatch(/[<>()`]|\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/);
        for (const command of code.split(/[;&|\n]/)) {
          const first = command.trim().replace(/^!\s+/, "").split(/\s+/)[0];
          if (first !== "") expect(first, text).toBe("git");
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
