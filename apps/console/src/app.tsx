import { useCallback, useState } from "react";
import { AgentList } from "./agents/agent-list";
import { AgentPage } from "./agents/agent-page";
import { type Client, clientFor, storedKey, storeKey } from "./api";
import { EnvironmentList } from "./environments/environment-list";
import { EnvironmentPage } from "./environments/environment-page";
import { Login } from "./login";
import { type Route, useRoute } from "./router";
import { SessionList } from "./sessions/session-list";
import { SessionPage } from "./sessions/session-page";
import { Link } from "./ui";

export function App() {
  const [refused, setRefused] = useState(false);
  const signOut = useCallback(() => {
    storeKey(null);
    setClient(null);
  }, []);
  // A key the gateway stops accepting (revoked mid-use) signs the tab out, saying why.
  const refuse = useCallback(() => {
    setRefused(true);
    signOut();
  }, [signOut]);
  const [client, setClient] = useState<Client | null>(() => {
    const key = storedKey();
    return key === null ? null : clientFor(key, refuse);
  });
  const route = useRoute();
  if (client === null) {
    return (
      <Login
        notice={refused ? "The gateway no longer accepts that API key; sign in again." : null}
        onLogin={(apiKey) => {
          storeKey(apiKey);
          setRefused(false);
          setClient(clientFor(apiKey, refuse));
        }}
      />
    );
  }
  const section = route.page.startsWith("agent")
    ? "agents"
    : route.page.startsWith("environment")
      ? "environments"
      : "sessions";
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Wakeloop</span>
        <nav aria-label="Sections">
          <ul>
            {(["sessions", "agents", "environments"] as const).map((page) => (
              <li key={page} aria-current={section === page ? "page" : undefined}>
                <Link to={{ page }}>{page[0]?.toUpperCase() + page.slice(1)}</Link>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Page route={route} client={client} />
      </main>
    </>
  );
}

function Page({ route, client }: { route: Route; client: Client }) {
  switch (route.page) {
    case "sessions":
      return <SessionList client={client} />;
    case "session":
      return <SessionPage key={route.id} client={client} id={route.id} />;
    case "agents":
      return <AgentList client={client} />;
    case "agent":
      return <AgentPage key={route.id} client={client} id={route.id} />;
    case "environments":
      return <EnvironmentList client={client} />;
    case "environment":
      return <EnvironmentPage key={route.id} client={client} id={route.id} />;
  }
}
