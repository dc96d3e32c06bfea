import type { Client } from "../api";
import { ErrorNote, Link, useLoad } from "../ui";
import { StatusBadge } from "./status-badge";

// Sub-sessions nest as deep as the platform allows (MAX_SUBSESSION_DEPTH); past this the tree links on.
const MAX_DEPTH = 6;

/** The sessions spawned by `parentId` (parent_session_id), each with its own children below it. */
export function SubSessionTree({ client, parentId }: { client: Client; parentId: string }) {
  return (
    <section aria-labelledby="children-heading" className="panel">
      <h2 id="children-heading">Sub-sessions</h2>
      <Children client={client} parentId={parentId} depth={1} />
    </section>
  );
}

function Children({ client, parentId, depth }: { client: Client; parentId: string; depth: number }) {
  const children = useLoad(
    () => client.sessions.list({ parent_session_id: parentId, limit: 200 }),
    [client, parentId],
  );
  if (children.error) return <ErrorNote error={children.error} />;
  if (children.data === undefined) return null;
  if (children.data.data.length === 0) return depth === 1 ? <p>None.</p> : null;
  return (
    <ul className="tree" aria-label={depth === 1 ? "Sub-session tree" : undefined}>
      {children.data.data.map((child) => (
        <li key={child.id}>
          <Link to={{ page: "session", id: child.id }}>{child.title ?? child.id}</Link>{" "}
          <StatusBadge session={child} />
          {depth < MAX_DEPTH && <Children client={client} parentId={child.id} depth={depth + 1} />}
        </li>
      ))}
    </ul>
  );
}
