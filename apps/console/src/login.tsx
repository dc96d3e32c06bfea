import { type FormEvent, useState } from "react";
import { clientFor } from "./api";
import { ErrorNote, useAction } from "./ui";

/** Asks for an API key and keeps it only once the gateway accepted it. */
export function Login({ onLogin, notice }: { onLogin: (apiKey: string) => void; notice: string | null }) {
  const [apiKey, setApiKey] = useState("");
  const { busy, error, run } = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const key = apiKey.trim();
    const client = clientFor(key);
    void run(async () => {
      await client.agents.list({ limit: 1 });
      onLogin(key);
    });
  };
  return (
    <main className="login" id="main">
      <h1>Wakeloop console</h1>
      {notice !== null && (
        <p role="status" className="error">
          {notice}
        </p>
      )}
      <form onSubmit={submit} aria-label="Sign in">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
        />
        <p className="hint">Kept in this tab only (sessionStorage); closing the tab signs you out.</p>
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}
