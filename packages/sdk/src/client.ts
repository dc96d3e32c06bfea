import type {
  Agent,
  AgentVersionDiff,
  ApiError,
  CreateAgentRequest,
  CreateEnvironmentRequest,
  CreateScheduledTaskRequest,
  CreateSessionRequest,
  Environment,
  PendingAction,
  ScheduledTask,
  ScheduledTaskList,
  Session,
  SessionEvent,
  SessionStatus,
  StreamDelta,
  SubstrateFileList,
  SubstrateVersion,
  SubstrateVersionList,
  SubstrateVersionWithContent,
  TraceResponse,
  UiComponent,
  UpdateAgentRequest,
  UpdateSessionRequest,
  UserEventInput,
} from "@wakeloop/contracts";
// The subpath, not the index: a browser bundle of the SDK takes no schemas (zod) with it.
import { backoffDelay, retryAfterMs, sleep } from "@wakeloop/contracts/backoff";
import type { SessionToolSet } from "@wakeloop/tool-runtime";
import { EventSourceParserStream } from "eventsource-parser/stream";

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}

/** A non-2xx answer of the API, with its `{error:{type,message,details}}` body. */
export class WakeloopApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: ApiError["error"],
  ) {
    super(`${status} ${error.type}: ${error.message}`);
    this.name = "WakeloopApiError";
  }
}

/** A page of a list, newest first; pass `next_after_id` as `after_id` for the next one. */
export interface Page<T> {
  data: T[];
  next_after_id: string | null;
}

export interface ListOptions {
  limit?: number;
  after_id?: string;
  include_archived?: boolean;
}

export interface ListSessionsOptions {
  status?: SessionStatus;
  agent_id?: string;
  parent_session_id?: string;
  limit?: number;
  after_id?: string;
}

/** `?a=1&b=x` of the options that are set (an empty string when none is). */
function queryString(options: object): string {
  const entries = Object.entries(options).flatMap(
    ([key, value]): Array<[string, string]> => (value === undefined ? [] : [[key, String(value)]]),
  );
  return entries.length === 0 ? "" : `?${new URLSearchParams(entries)}`;
}

/** A small typed client of the Wakeloop HTTP API; it runs in Node and in browsers. */
export function createClient(options: ClientOptions) {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/$/, "");

  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const response = await doFetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.apiKey}`,
        ...(body !== undefined && { "content-type": "application/json" }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = parseBody(text);
    if (!response.ok) throw new WakeloopApiError(response.status, errorOf(text));
    if (parsed === undefined && text !== "") {
      throw new WakeloopApiError(response.status, {
        type: "api_error",
        message: `the server at ${base} answered with something other than JSON: is it a Wakeloop gateway?`,
      });
    }
    return parsed as T;
  }

  return {
    agents: {
      create: (spec: CreateAgentRequest) => call<Agent>("POST", "/v1/agents", spec),
      get: (id: string, version?: number) =>
        call<Agent>("GET", `/v1/agents/${id}${queryString({ version })}`),
      list: (list: ListOptions = {}) => call<Page<Agent>>("GET", `/v1/agents${queryString(list)}`),
      /** Replaces the given fields and makes a new version; sessions keep the version they started on. */
      update: (id: string, spec: UpdateAgentRequest) => call<Agent>("POST", `/v1/agents/${id}`, spec),
      /** Oldest version first. */
      versions: (id: string, list: { limit?: number; after_version?: number } = {}) =>
        call<{ data: Agent[]; next_after_version: number | null }>(
          "GET",
          `/v1/agents/${id}/versions${queryString(list)}`,
        ),
      archive: (id: string) => call<Agent>("POST", `/v1/agents/${id}/archive`),
      /** What changed between two versions (default: the latest and the one before it). */
      diff: (id: string, range: { from?: number; to?: number } = {}) =>
        call<AgentVersionDiff>("GET", `/v1/agents/${id}/versions/diff${queryString(range)}`),
      /** Makes `version`'s spec the latest again; `apply_to_sessions` moves unfinished sessions onto it. */
      rollback: (id: string, version: number, options: { apply_to_sessions?: boolean } = {}) =>
        call<Agent>("POST", `/v1/agents/${id}/rollback`, { version, ...options }),
      /** A UI component the agent stored, to render a `component` block (its `version` when it has one). */
      uiComponent: (id: string, name: string, version?: number) =>
        call<UiComponent>(
          "GET",
          `/v1/agents/${id}/ui_components/${encodeURIComponent(name)}${queryString({ version })}`,
        ),
    },
    environments: {
      create: (spec: CreateEnvironmentRequest) => call<Environment>("POST", "/v1/environments", spec),
      get: (id: string) => call<Environment>("GET", `/v1/environments/${id}`),
      list: (list: ListOptions = {}) =>
        call<Page<Environment>>("GET", `/v1/environments${queryString(list)}`),
      update: (id: string, spec: Partial<CreateEnvironmentRequest>) =>
        call<Environment>("POST", `/v1/environments/${id}`, spec),
      archive: (id: string) => call<Environment>("POST", `/v1/environments/${id}/archive`),
    },
    scheduledTasks: {
      create: (agentId: string, body: CreateScheduledTaskRequest) =>
        call<ScheduledTask>("POST", `/v1/agents/${agentId}/scheduled_tasks`, body),
      list: (agentId: string, includeDisabled = false) =>
        call<ScheduledTaskList>(
          "GET",
          `/v1/agents/${agentId}/scheduled_tasks?include_disabled=${String(includeDisabled)}`,
        ),
      get: (agentId: string, taskId: string) =>
        call<ScheduledTask>("GET", `/v1/agents/${agentId}/scheduled_tasks/${taskId}`),
      enable: (agentId: string, taskId: string) =>
        call<ScheduledTask>("POST", `/v1/agents/${agentId}/scheduled_tasks/${taskId}/enable`),
      disable: (agentId: string, taskId: string) =>
        call<ScheduledTask>("POST", `/v1/agents/${agentId}/scheduled_tasks/${taskId}/disable`),
      cancel: (agentId: string, taskId: string) =>
        call<{ id: string; deleted: true }>("DELETE", `/v1/agents/${agentId}/scheduled_tasks/${taskId}`),
    },
    /** The agent's versioned substrate, mounted read-only at /workspace/agent in its sandboxes. */
    resources: {
      list: (agentId: string) => call<SubstrateFileList>("GET", `/v1/agents/${agentId}/resources`),
      /** A file's versions, newest first. */
      versions: (agentId: string, path: string, limit?: number) =>
        call<SubstrateVersionList>(
          "GET",
          `/v1/agents/${agentId}/resources/versions${queryString({ path, limit })}`,
        ),
      version: (agentId: string, versionId: string) =>
        call<SubstrateVersionWithContent>("GET", `/v1/agents/${agentId}/resources/versions/${versionId}`),
      /** Makes the version's content the file's new latest version; `expected_version_id` guards a race. */
      restore: (agentId: string, versionId: string, options: { expected_version_id?: string } = {}) =>
        call<SubstrateVersion>("POST", `/v1/agents/${agentId}/resources/restore`, {
          version_id: versionId,
          ...options,
        }),
    },
    sessions: {
      create: (body: CreateSessionRequest) => call<Session>("POST", "/v1/sessions", body),
      get: (id: string) => call<Session>("GET", `/v1/sessions/${id}`),
      update: (id: string, body: UpdateSessionRequest) => call<Session>("POST", `/v1/sessions/${id}`, body),
      archive: (id: string) => call<Session>("POST", `/v1/sessions/${id}/archive`),
      list: (list: ListSessionsOptions = {}) =>
        call<Page<Session>>("GET", `/v1/sessions${queryString(list)}`),
      pending: (id: string) => call<{ data: PendingAction[] }>("GET", `/v1/sessions/${id}/pending`),
      /** The tools the next turn would offer, and why each other tool is excluded. */
      tools: (id: string) => call<SessionToolSet>("GET", `/v1/sessions/${id}/tools`),
      /** The span trees of the session's recent wakes, or of one wake. */
      trace: (id: string, trace: { wake_id?: string; limit?: number } = {}) =>
        call<TraceResponse>("GET", `/v1/sessions/${id}/trace${queryString(trace)}`),
    },
    events: {
      send: (sessionId: string, events: UserEventInput[], idempotencyKey?: string) =>
        call<{ events: SessionEvent[] }>(
          "POST",
          `/v1/sessions/${sessionId}/events`,
          { events },
          idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
        ),
      list: (sessionId: string, afterSeq = 0, limit = 100) =>
        call<{ data: SessionEvent[]; next_after_seq: number | null }>(
          "GET",
          `/v1/sessions/${sessionId}/events?after_seq=${afterSeq}&limit=${limit}`,
        ),
      /**
       * The session's events from `afterSeq` on, live, as an async iterator. A dropped connection is
       * resumed with `Last-Event-ID`, so nothing is missed, and so is a 429, 502, 503 or 504 answer,
       * after its `Retry-After` or a growing pause; another error status throws. Stop with `signal`.
       * With `deltas: true` the model's live deltas come in between (`ephemeral: true`, never stored;
       * `LivePreview` turns them into the text being written).
       */
      stream: ((sessionId: string, streamOptions: StreamOptions = {}) =>
        streamEvents(
          doFetch,
          `${base}/v1/sessions/${sessionId}/events/stream${streamOptions.deltas ? "?deltas=true" : ""}`,
          options.apiKey,
          streamOptions,
        )) as EventStream,
    },
  };
}

export type WakeloopClient = ReturnType<typeof createClient>;

/** A page of a list: newest first, `next_after_id` continues it. */
export interface Page<T> {
  data: T[];
  next_after_id: string | null;
}

export interface StreamOptions {
  afterSeq?: number;
  signal?: AbortSignal;
  /** Also deliver the model's live deltas as it writes (a preview; the stored events are the answer). */
  deltas?: boolean;
  /** Called before each reconnect, with the last seq seen (the stream resumes after it). */
  onReconnect?: (lastSeq: number) => void;
}

/** `events.stream`: stored events only, or, when `deltas` is set, the live deltas in between. */
export interface EventStream {
  (sessionId: string, options?: StreamOptions & { deltas?: false }): AsyncGenerator<SessionEvent>;
  (sessionId: string, options: StreamOptions): AsyncGenerator<SessionEvent | StreamDelta>;
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The `error` of an API error body, or the body's text when it is not one (a proxy's page). */
function errorOf(text: string): ApiError["error"] {
  return (parseBody(text) as Partial<ApiError> | undefined)?.error ?? { type: "api_error", message: text };
}

/**
 * Answers a stream is asked for again after a pause: rate limited, or the gateway (or a proxy in
 * front of it) unable to serve for now (the gateway answers 503 with `Retry-After` while Postgres has
 * no connection to give). Any other error status is the caller's to handle.
 */
const RETRYABLE_STREAM_STATUS = new Set([429, 502, 503, 504]);
const RECONNECT_BACKOFF = { initialMs: 500, maxMs: 10_000 };

/** What the server asked for (at most a minute), else a pause that doubles with each failure in a row. */
function reconnectDelayMs(failures: number, headers?: Headers): number {
  const asked = retryAfterMs(headers, Date.now());
  return asked === undefined ? backoffDelay(failures, RECONNECT_BACKOFF) : Math.min(asked, 60_000);
}

async function* streamEvents(
  doFetch: typeof fetch,
  url: string,
  apiKey: string,
  options: StreamOptions,
): AsyncGenerator<SessionEvent | StreamDelta> {
  let lastSeq = options.afterSeq ?? 0;
  // Connections in a row that failed before the stream began: each waits longer.
  let failures = 0;
  for (let attempt = 0; !options.signal?.aborted; attempt++) {
    if (attempt > 0) options.onReconnect?.(lastSeq);
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: "text/event-stream",
          "last-event-id": String(lastSeq),
        },
        ...(options.signal && { signal: options.signal }),
      });
    } catch {
      if (options.signal?.aborted) return;
      await sleep(reconnectDelayMs(failures++), options.signal);
      continue;
    }
    if (RETRYABLE_STREAM_STATUS.has(response.status)) {
      await response.body?.cancel();
      await sleep(reconnectDelayMs(failures++, response.headers), options.signal);
      continue;
    }
    if (!response.ok || response.body === null) {
      throw new WakeloopApiError(response.status, errorOf(await response.text()));
    }
    failures = 0;
    const messages = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    try {
      for await (const message of messages) {
        const item = JSON.parse(message.data) as SessionEvent | StreamDelta;
        // A delta has no seq: it moves no cursor, and a reconnect never asks for it again.
        if ("ephemeral" in item) {
          yield item;
          continue;
        }
        const event = item;
        if (event.seq <= lastSeq) continue;
        lastSeq = event.seq;
        yield event;
      }
    } catch {
      // The connection dropped: reconnect from the last event seen, unless the caller stopped.
      if (options.signal?.aborted) return;
    }
  }
}
