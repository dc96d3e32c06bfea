import type { ReactNode } from "react";

/** A table with a caption for screen readers, column headers, and sideways scrolling on phones. */
export function DataTable({
  caption,
  columns,
  loading = false,
  visibleCaption = false,
  className,
  children,
}: {
  caption: ReactNode;
  columns: readonly { label: string; className?: string }[];
  loading?: boolean;
  visibleCaption?: boolean;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table aria-busy={loading} className={className}>
        <caption className={visibleCaption ? undefined : "visually-hidden"}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" className={column.className}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** Column headers from plain labels. */
export const columns = (...labels: string[]) => labels.map((label) => ({ label }));
