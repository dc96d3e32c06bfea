import { useState } from "react";
import { columns, DataTable } from "../data-table";
import { ErrorNote, useLoad } from "../ui";
import type { SessionPartProps } from "./session-part";

/**
 * The tools the next turn may call, which of them its request offers and which wait for tool_search
 * (docs/tool-search.md), and, for any other tool, the pipeline step that removed it.
 */
export function ToolSetView({ client, sessionId, refreshKey }: SessionPartProps) {
  const tools = useLoad(() => client.sessions.tools(sessionId), [client, sessionId, refreshKey]);
  const [query, setQuery] = useState("");
  const name = query.trim();
  const offered = tools.data?.tools.find((tool) => tool.name === name);
  const placement = [...(tools.data?.offered ?? []), ...(tools.data?.deferred ?? [])].find(
    (entry) => entry.tool === name,
  );
  const offeredNames = new Set(tools.data?.offered.map((entry) => entry.tool));
  const exclusions = tools.data?.excluded.filter((exclusion) => exclusion.tool === name) ?? [];
  return (
    <section aria-labelledby="tools-heading" className="panel">
      <h2 id="tools-heading">Tools</h2>
      <ErrorNote error={tools.error} />
      <label htmlFor="missing-tool">Why is this tool missing?</label>
      <input
        id="missing-tool"
        list="known-tools"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
        placeholder="tool name"
      />
      <datalist id="known-tools">
        {tools.data?.excluded.map((exclusion) => (
          <option key={`${exclusion.tool}:${exclusion.step}`} value={exclusion.tool} />
        ))}
      </datalist>
      {name !== "" && tools.data && (
        <div aria-live="polite" className="answer">
          {offered ? (
            <p>
              <code>{name}</code> is {offeredNames.has(name) ? "offered" : "deferred"} (
              {placement?.reason ?? ""}; {offered.permissionPolicy}, from{" "}
              {offered.permissionSetting ?? offered.permissionSource}).
            </p>
          ) : exclusions.length > 0 ? (
            <ul>
              {exclusions.map((exclusion) => (
                <li key={exclusion.step}>
                  Removed at step <strong>{exclusion.step}</strong> by <code>{exclusion.rule}</code>:{" "}
                  {exclusion.reason}
                </li>
              ))}
            </ul>
          ) : (
            <p>
              No tool named <code>{name}</code> is known to this session.
            </p>
          )}
        </div>
      )}
      <details>
        <summary>
          Callable this turn ({tools.data?.tools.length ?? 0}, {offeredNames.size} offered, the rest found
          with tool_search)
        </summary>
        <DataTable
          caption="Tools callable this turn"
          columns={columns("Tool", "Offered", "Group", "Permission", "Runs in")}
        >
          {tools.data?.tools.map((tool) => (
            <tr key={tool.name}>
              <th scope="row">
                <code>{tool.name}</code>
              </th>
              <td>{offeredNames.has(tool.name) ? "offered" : "deferred"}</td>
              <td>{tool.group}</td>
              <td>{tool.permissionPolicy}</td>
              <td>{tool.executor}</td>
            </tr>
          ))}
        </DataTable>
      </details>
      <details>
        <summary>Excluded ({tools.data?.excluded.length ?? 0})</summary>
        <ul>
          {tools.data?.excluded.map((exclusion) => (
            <li key={`${exclusion.tool}:${exclusion.step}`}>
              <code>{exclusion.tool}</code> — {exclusion.step}: {exclusion.reason}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
