import {
  type DependencyList,
  type MouseEvent,
  type ReactNode,
  useCallback,
  useEffect,
  useState,
} from "react";
import { describeError } from "./api";
import { hrefOf, navigate, type Route } from "./router";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); a result that arrives after a newer call is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error: unknown) =>
        current && setState((previous) => ({ ...previous, error: describeError(error), loading: false })),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { ...state, reload };
}

/** Runs one action at a time for a button or form and keeps its error to show. */
export function useAction(): {
  busy: boolean;
  error: string | null;
  run: (action: () => Promise<unknown>) => Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(describeError(caught));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

export function ErrorNote({ error }: { error: string | null }) {
  if (error === null) return null;
  return (
    <p role="alert" className="error">
      {error}
    </p>
  );
}

/** A link to a console route that navigates in place (and still opens in a new tab with a modifier). */
export function Link({ to, children }: { to: Route; children: ReactNode }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={hrefOf(to)} onClick={onClick}>
      {children}
    </a>
  );
}

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <figure className="json-figure" aria-label={label}>
      <pre className="json">{JSON.stringify(value, null, 2)}</pre>
    </figure>
  );
}

export function formatTime(timestamp: string): string {
  return new Date(timestamp).toLocaleString();
}
