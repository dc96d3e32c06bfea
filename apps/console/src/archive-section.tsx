import { ErrorNote, useAction } from "./ui";

/** Archiving a resource after a confirmation; `effect` says what archiving it means. */
export function ArchiveSection({
  kind,
  name,
  effect,
  archive,
}: {
  kind: string;
  name: string;
  effect: string;
  archive: () => Promise<unknown>;
}) {
  const action = useAction();
  return (
    <section aria-labelledby="archive-heading" className="panel">
      <h2 id="archive-heading">Archive</h2>
      <p>{effect}</p>
      <button
        type="button"
        className="danger"
        disabled={action.busy}
        onClick={() => {
          if (window.confirm(`Archive ${kind} ${name}?`)) void action.run(archive);
        }}
      >
        Archive {kind}
      </button>
      <ErrorNote error={action.error} />
    </section>
  );
}
