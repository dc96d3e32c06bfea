import type { Page } from "@wakeloop/sdk";
import { type ReactNode, useState } from "react";
import { DataTable } from "./data-table";
import { navigate, type Route } from "./router";
import { SpecEditor } from "./spec-editor";
import { ErrorNote, Link, useLoad } from "./ui";

/**
 * The list page of a kind of resource (agents, environments): create one from a JSON spec, list them
 * newest first with or without the archived ones, each linking to its own page.
 */
export function ResourceList<T extends { id: string; name: string }>({
  title,
  noun,
  template,
  create,
  list,
  pageOf,
  headers,
  cells,
}: {
  title: string;
  noun: string;
  template: unknown;
  create: (spec: Record<string, unknown>) => Promise<{ id: string }>;
  list: (includeArchived: boolean) => Promise<Page<T>>;
  pageOf: (id: string) => Route;
  /** The columns after the first (the name). */
  headers: string[];
  cells: (item: T) => ReactNode[];
}) {
  const [includeArchived, setIncludeArchived] = useState(false);
  const items = useLoad(() => list(includeArchived), [includeArchived]);
  const capitalized = `${noun[0]?.toUpperCase()}${noun.slice(1)}`;
  return (
    <>
      <h1>{title}</h1>
      <details className="panel">
        <summary>
          Create {/^[aeiou]/.test(noun) ? "an" : "a"} {noun}
        </summary>
        <SpecEditor
          initial={template}
          label={`New ${noun}`}
          submitLabel={`Create ${noun}`}
          onSave={async (spec) => navigate(pageOf((await create(spec)).id))}
        />
      </details>
      <label className="check">
        <input
          type="checkbox"
          checked={includeArchived}
          onChange={(event) => setIncludeArchived(event.target.checked)}
        />
        Include archived
      </label>
      <ErrorNote error={items.error} />
      <DataTable
        caption={`${title}, newest first`}
        columns={[capitalized, ...headers].map((label) => ({ label }))}
        loading={items.loading}
      >
        {items.data?.data.map((item) => (
          <tr key={item.id}>
            <td>
              <Link to={pageOf(item.id)}>{item.name}</Link>
            </td>
            {cells(item).map((cell, index) => (
              <td key={headers[index]}>{cell}</td>
            ))}
          </tr>
        ))}
      </DataTable>
      {items.data?.data.length === 0 && <p>No {noun}s yet.</p>}
    </>
  );
}
