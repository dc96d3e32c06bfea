/** A labelled choice among named resources (agents, environments), with a first "none" option. */
export function NamedSelect({
  label,
  items,
  value,
  onChange,
  noneLabel,
  required = false,
}: {
  label: string;
  items: readonly { id: string; name: string }[];
  value: string;
  onChange: (id: string) => void;
  noneLabel: string;
  required?: boolean;
}) {
  return (
    <label>
      {label}
      <select required={required} value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">{noneLabel}</option>
        {items.map((item) => (
          <option key={item.id} value={item.id}>
            {item.name}
          </option>
        ))}
      </select>
    </label>
  );
}
