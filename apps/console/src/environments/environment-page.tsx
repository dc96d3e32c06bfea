import type { Environment } from "@wakeloop/contracts";
import type { Client } from "../api";
import { ArchiveSection } from "../archive-section";
import { SpecEditor } from "../spec-editor";
import { ErrorNote, formatTime, useLoad } from "../ui";

function specOf({ id, created_at, updated_at, ...spec }: Environment) {
  return spec;
}

export function EnvironmentPage({ client, id }: { client: Client; id: string }) {
  const environment = useLoad(() => client.environments.get(id), [client, id]);
  const e = environment.data;
  return (
    <>
      <h1>{e ? `Environment ${e.name}` : "Environment"}</h1>
      <ErrorNote error={environment.error} />
      {e && (
        <>
          <p>
            <code>{e.id}</code> — updated {formatTime(e.updated_at)}
          </p>
          <section aria-labelledby="edit-heading" className="panel">
            <h2 id="edit-heading">Edit</h2>
            <SpecEditor
              key={e.updated_at}
              initial={specOf(e)}
              label={`Environment ${e.name}`}
              submitLabel="Save"
              onSave={async (spec) => {
                await client.environments.update(id, spec);
                environment.reload();
              }}
            />
          </section>
          <ArchiveSection
            kind="environment"
            name={e.name}
            effect="An archived environment is offered to no new session."
            archive={() => client.environments.archive(id).then(environment.reload)}
          />
        </>
      )}
    </>
  );
}
