import type { Agent } from "@wakeloop/contracts";
import { useState } from "react";
import type { Client } from "../api";
import { ArchiveSection } from "../archive-section";
import { SpecDiff } from "../spec-diff";
import { SpecEditor } from "../spec-editor";
import { ErrorNote, formatTime, useLoad } from "../ui";

/** The fields a client sets; the rest (id, version, timestamps) the gateway assigns. */
function specOf({ id, version, created_at, updated_at, ...spec }: Agent) {
  return spec;
}

export function AgentPage({ client, id }: { client: Client; id: string }) {
  const agent = useLoad(() => client.agents.get(id), [client, id]);
  const versions = useLoad(
    () => client.agents.versions(id, { limit: 200 }),
    [client, id, agent.data?.version],
  );
  const a = agent.data;
  return (
    <>
      <h1>{a ? `Agent ${a.name}` : "Agent"}</h1>
      <ErrorNote error={agent.error ?? versions.error} />
      {a && (
        <>
          <p>
            <code>{a.id}</code> — version {a.version}, updated {formatTime(a.updated_at)}
          </p>
          <section aria-labelledby="edit-heading" className="panel">
            <h2 id="edit-heading">Edit (saves a new version)</h2>
            <SpecEditor
              key={a.version}
              initial={specOf(a)}
              label={`Agent ${a.name}`}
              submitLabel="Save new version"
              onSave={async (spec) => {
                await client.agents.update(id, spec);
                agent.reload();
              }}
            />
          </section>
          {versions.data && (
            // A new version resets the comparison to the latest two.
            <VersionDiff key={versions.data.data.at(-1)?.version} versions={versions.data.data} />
          )}
          <ArchiveSection
            kind="agent"
            name={a.name}
            effect="An archived agent starts no new sessions; its running sessions go on."
            archive={() => client.agents.archive(id).then(agent.reload)}
          />
        </>
      )}
    </>
  );
}

function VersionDiff({ versions }: { versions: Agent[] }) {
  const latest = versions.at(-1)?.version ?? 1;
  const [from, setFrom] = useState(Math.max(latest - 1, 1));
  const [to, setTo] = useState(latest);
  const before = versions.find((version) => version.version === from);
  const after = versions.find((version) => version.version === to);
  const select = (value: number, set: (version: number) => void, label: string) => (
    <label>
      {label}
      <select value={value} onChange={(event) => set(Number(event.target.value))}>
        {versions.map((version) => (
          <option key={version.version} value={version.version}>
            v{version.version} ({formatTime(version.created_at)})
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section aria-labelledby="versions-heading" className="panel">
      <h2 id="versions-heading">Versions ({versions.length})</h2>
      <div className="filters">
        {select(from, setFrom, "From")}
        {select(to, setTo, "To")}
      </div>
      {before && after && (
        <SpecDiff before={specOf(before)} after={specOf(after)} label={`v${from} → v${to}`} />
      )}
    </section>
  );
}
