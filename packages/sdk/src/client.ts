import type {
  Agent,
  ApiError,
  CreateAgentRequest,
  CreateSessionRequest,
  PendingAction,
  Session,
  SessionEvent,
  UpdateSessionRequest,
  UserEventInput,
} from "@wakeloop/contracts";
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

/** A small typed client of the Wakeloop HTTP API. */
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
    const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
    if (!response.ok) {
      const error = (parsed as ApiError | undefined)?.error ?? { type: "api_error" as const, message: text };
      throw new WakeloopApiError(response.status, error);
    }
    return parsed as T;
  }

  return {
    agents: {
      create: (spec: CreateAgentRequest) => call<Agent>("POST", "/v1/agents", spec),
      get: (id: string) => call<Agent>("GET", `/v1/agents/${id}`),
    },
    sessions: {
      create: (body: CreateSessionRequest) => call<Session>("POST", "/v1/sessions", body),
      get: (id: string) => call<Session>("GET", `/v1/sessions/${id}`),
      update: (id: string, body: UpdateSessionRequest) => call<Session>("POST", `/v1/sessions/${id}`, body),
      archive: (id: string) => call<Session>("POST", `/v1/sessions/${id}/archive`),
      pending: (id: string) => call<{ data: PendingAction[] }>("GET", `/v1/sessions/${id}/pending`),
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
       * resumed with `Last-Event-ID`, so nothing is missed; stop with `signal`.
       */
      stream: (sessionId: string, streamOptions: { afterSeq?: number; signal?: AbortSignal } = {}) =>
        streamEvents(
          doFetch,
          `${base}/v1/sessions/${sessionId}/events/stream`,
          options.apiKey,
          streamOptions,
        ),
    },
  };
}

export type WakeloopClient = ReturnType<typeof createClient>;

async function* streamEvents(
  doFetch: typeof fetch,
  url: string,
  apiKey: string,
  options: { afterSeq?: number; signal?: AbortSignal },
): AsyncGenerator<SessionEvent> {
  let lastSeq = options.afterSeq ?? 0;
  while (!options.signal?.aborted) {
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
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    if (!response.ok || response.body === null) {
      const text = await response.text();
      throw new WakeloopApiError(response.status, { type: "api_error", message: text });
    }
    const messages = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    try {
      for await (const message of messages) {
        const event = JSON.parse(message.data) as SessionEvent;
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
