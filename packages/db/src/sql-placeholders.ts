import { WakeloopError } from "@wakeloop/contracts";

/**
 * Rewrites the `?` placeholders of agent SQL (the reference's SQLite style) into Postgres' `$1, $2…`,
 * leaving alone every `?` inside a string literal ('…', E'…'), a quoted identifier, a dollar-quoted
 * body or a comment. Postgres' jsonb `?` operators are therefore not available in agent SQL; the
 * functions jsonb_exists / jsonb_exists_any / jsonb_exists_all do the same.
 */
export function translatePlaceholders(text: string, paramCount: number): string {
  let out = "";
  let count = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    let end = i + 1;
    if (ch === "'" || ch === '"') {
      const escapes = ch === "'" && /[eE]/.test(text[i - 1] ?? "") && !/\w/.test(text[i - 2] ?? "");
      end = quotedEnd(text, i, ch, escapes);
    } else if (ch === "-" && next === "-") {
      const newline = text.indexOf("\n", i);
      end = newline === -1 ? text.length : newline;
    } else if (ch === "/" && next === "*") {
      end = blockCommentEnd(text, i);
    } else if (ch === "$" && !/\w/.test(text[i - 1] ?? "")) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i))?.[0];
      if (tag !== undefined) {
        const close = text.indexOf(tag, i + tag.length);
        end = close === -1 ? text.length : close + tag.length;
      }
    } else if (ch === "?") {
      count += 1;
      out += `$${count}`;
      i += 1;
      continue;
    }
    out += text.slice(i, end);
    i = end;
  }
  if (count !== paramCount) {
    throw new WakeloopError(
      "invalid_request",
      `the SQL has ${count} ? placeholder(s) but ${paramCount} param(s) were given; pass one param per ?`,
    );
  }
  return out;
}

function quotedEnd(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (backslashEscapes && ch === "\\") {
      i += 2;
    } else if (ch === quote && text[i + 1] === quote) {
      i += 2;
    } else if (ch === quote) {
      return i + 1;
    } else {
      i += 1;
    }
  }
  return text.length;
}

// Postgres block comments nest.
function blockCommentEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text.startsWith("/*", i)) {
      depth += 1;
      i += 2;
    } else if (text.startsWith("*/", i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else {
      i += 1;
    }
  }
  return text.length;
}

/** The statement's first keyword, lower case, after leading blanks, comments and parentheses. */
export function leadingKeyword(text: string): string {
  let i = 0;
  for (;;) {
    const rest = text.slice(i);
    const blank = /^[\s(]+/.exec(rest)?.[0];
    if (blank !== undefined) i += blank.length;
    else if (rest.startsWith("--")) i = text.indexOf("\n", i) === -1 ? text.length : text.indexOf("\n", i);
    else if (rest.startsWith("/*")) i = blockCommentEnd(text, i);
    else break;
  }
  return (/^[A-Za-z]+/.exec(text.slice(i))?.[0] ?? "").toLowerCase();
}
