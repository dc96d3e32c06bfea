import { type FormEvent, useState } from "react";
import { SpecDiff, specText } from "./spec-diff";
import { ErrorNote, useAction } from "./ui";

/**
 * Edits a spec (agent or environment) as JSON: the text must parse before anything is sent, the
 * changes can be reviewed as a diff, and the gateway's validation errors are shown as it words them.
 */
export function SpecEditor({
  initial,
  label,
  submitLabel,
  onSave,
}: {
  initial: unknown;
  label: string;
  submitLabel: string;
  onSave: (spec: Record<string, unknown>) => Promise<unknown>;
}) {
  const [text, setText] = useState(() => specText(initial));
  const [review, setReview] = useState(false);
  const { busy, error, run } = useAction();
  let parsed: Record<string, unknown> | null = null;
  let parseError: string | null = null;
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value))
      parseError = "give a JSON object";
    else parsed = value as Record<string, unknown>;
  } catch (caught) {
    parseError = `not valid JSON: ${(caught as Error).message}`;
  }
  const id = `spec-${label.replace(/\W+/g, "-").toLowerCase()}`;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (parsed !== null) void run(() => onSave(parsed));
  };
  return (
    <form onSubmit={submit} aria-label={label} className="stack">
      <label htmlFor={id}>{label} (JSON)</label>
      <textarea
        id={id}
        className="code"
        rows={16}
        spellCheck={false}
        value={text}
        aria-invalid={parseError !== null}
        aria-describedby={parseError === null ? undefined : `${id}-error`}
        onChange={(event) => setText(event.target.value)}
      />
      {parseError !== null && (
        <p id={`${id}-error`} className="error" role="alert">
          {parseError}
        </p>
      )}
      <div className="buttons">
        <button type="button" className="secondary" onClick={() => setReview(!review)} aria-expanded={review}>
          {review ? "Hide changes" : "Review changes"}
        </button>
        <button type="submit" disabled={busy || parsed === null}>
          {submitLabel}
        </button>
      </div>
      {review && parsed !== null && <SpecDiff before={initial} after={parsed} label="Changes to save" />}
      <ErrorNote error={error} />
    </form>
  );
}
