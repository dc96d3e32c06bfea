// Glob patterns to regular expressions: `**` spans directories, `*` and `?` stay inside one path
// segment, `[...]` is a character class and `{a,b}` an alternation.

export function globToRegExp(pattern: string): RegExp {
  let source = "";
  let braces = 0;
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i] as string;
    if (char === "*") {
      if (pattern[i + 1] === "*") {
        const slashAfter = pattern[i + 2] === "/";
        source += slashAfter ? "(?:.*/)?" : ".*";
        i += slashAfter ? 2 : 1;
      } else {
        source += "[^/]*";
      }
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) {
        source += "\\[";
      } else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replaceAll("\\", "\\\\");
        source += `[${body}]`;
        i = end;
      }
    } else if (char === "{") {
      braces += 1;
      source += "(?:";
    } else if (char === "}" && braces > 0) {
      braces -= 1;
      source += ")";
    } else if (char === "," && braces > 0) {
      source += "|";
    } else {
      source += char.replace(/[.+^$()|\\/]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}
