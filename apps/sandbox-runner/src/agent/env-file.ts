// Parses the output of bash's `export -p` (declare -x NAME="value" lines; values escape " \ $ ` with a
// backslash and may span lines) so the agent knows a persistent shell's exported environment
// without forking a process after every command.

export function parseExports(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const header = /^declare -[a-zA-Z-]+ ([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i, i + 300));
    if (header === null) {
      const next = text.indexOf("\n", i);
      i = next === -1 ? text.length : next + 1;
      continue;
    }
    const name = header[1] as string;
    i += header[0].length;
    if (text[i] !== "=") {
      i = text.indexOf("\n", i) + 1 || text.length; // exported but without a value
      continue;
    }
    i += 2; // ="
    let value = "";
    while (i < text.length && text[i] !== '"') {
      const next = text[i + 1];
      if (text[i] === "\\" && next !== undefined && '"\\$`'.includes(next)) i += 1;
      value += text[i];
      i += 1;
    }
    env[name] = value;
    i += 2; // closing quote and newline
  }
  return env;
}

/** Quotes a string for bash with single quotes. */
export function shellQuote(value: string): string {
  return `'${String(value).replaceAll("'", "'\\''")}'`;
}
