import { structuredPatch } from "diff";

/** Pretty JSON with keys in a stable order, so a diff shows changes and not reorderings. */
export function specText(spec: unknown): string {
  return JSON.stringify(
    spec,
    (_, value: unknown) =>
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
        : value,
    2,
  );
}

/**
 * The changed lines of two specs with three lines of context, as unified-diff hunks; removed lines are
 * <del> and added ones <ins>, so screen readers say which is which.
 */
export function SpecDiff({ before, after, label }: { before: unknown; after: unknown; label: string }) {
  const { hunks } = structuredPatch("before", "after", `${specText(before)}\n`, `${specText(after)}\n`);
  return (
    <figure className="diff">
      <figcaption>{label}</figcaption>
      {hunks.length === 0 ? (
        <p>No differences.</p>
      ) : (
        hunks.map((hunk) => (
          <pre key={`${hunk.oldStart}:${hunk.newStart}`}>
            <span className="hunk">
              lines {hunk.oldStart}–{hunk.oldStart + hunk.oldLines - 1} → {hunk.newStart}–
              {hunk.newStart + hunk.newLines - 1}
              {"\n"}
            </span>
            {hunk.lines.map((line, index) => {
              const key = `${index}:${line}`;
              if (line.startsWith("+")) return <ins key={key}>{`${line}\n`}</ins>;
              if (line.startsWith("-")) return <del key={key}>{`${line}\n`}</del>;
              return <span key={key}>{`${line}\n`}</span>;
            })}
          </pre>
        ))
      )}
    </figure>
  );
}
