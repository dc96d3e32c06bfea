import { useSyncExternalStore } from "react";

/** Where the gateway serves the console; every route is a path under it. */
const BASE = "/console";

export type Route =
  | { page: "sessions" }
  | { page: "session"; id: string }
  | { page: "agents" }
  | { page: "agent"; id: string }
  | { page: "environments" }
  | { page: "environment"; id: string };

export function parseRoute(pathname: string): Route {
  const parts = pathname.slice(BASE.length).split("/").filter(Boolean).map(decodeURIComponent);
  const [section, id] = parts;
  switch (section) {
    case "agents":
      return id ? { page: "agent", id } : { page: "agents" };
    case "environments":
      return id ? { page: "environment", id } : { page: "environments" };
    case "sessions":
      return id ? { page: "session", id } : { page: "sessions" };
    default:
      return { page: "sessions" };
  }
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case "sessions":
    case "agents":
    case "environments":
      return `${BASE}/${route.page}`;
    case "session":
      return `${BASE}/sessions/${encodeURIComponent(route.id)}`;
    case "agent":
      return `${BASE}/agents/${encodeURIComponent(route.id)}`;
    case "environment":
      return `${BASE}/environments/${encodeURIComponent(route.id)}`;
  }
}

// Components that show the route; told on navigate() and on the browser's back and forward.
const listeners = new Set<() => void>();

export function navigate(route: Route): void {
  window.history.pushState(null, "", hrefOf(route));
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener("popstate", listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("popstate", listener);
  };
}

export function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, () => window.location.pathname));
}
