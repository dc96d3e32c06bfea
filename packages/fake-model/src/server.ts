import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import {
  anthropicErrorBody,
  anthropicMessage,
  anthropicModels,
  anthropicStreamFrames,
} from "./anthropic-protocol";
import { EmbeddingsRequest, embeddingsBody } from "./embeddings-protocol";
import { pause, readJsonBody, sendJson, streamFrames } from "./http-io";
import { openaiCompletion, openaiErrorBody, openaiModels, openaiStreamFrames } from "./openai-protocol";
import {
  type AnthropicCacheOptions,
  AnthropicPromptCache,
  NO_CACHE_USAGE,
  OpenAIPromptCache,
} from "./prompt-cache";
import { planReply, type StreamFailure, type SuccessTurn } from "./reply-plan";
import {
  type FakeRequestView,
  viewAnthropicRequest,
  viewOpenAIRequest,
  type WireProtocol,
} from "./request-view";
import {
  type DefaultTurn,
  OK_TURN,
  type ResolvedTurn,
  type Script,
  type Turn,
  TurnData,
  takeTurn,
} from "./script";

export interface FakeModelServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  script?: Script;
  /** Ids listed by `GET /v1/models`. */
  models?: readonly string[];
  /**
   * Stamps `receivedAt` and ages prompt-cache entries; defaults to epoch milliseconds with
   * sub-millisecond precision.
   */
  clock?: () => number;
  /** The Anthropic prompt cache's settings (its minimum cacheable prefix). */
  promptCache?: AnthropicCacheOptions;
}

export interface RecordedRequest {
  /** Arrival order, from 0. */
  index: number;
  method: string;
  path: string;
  /** Which wire protocol the request spoke; null for routes outside the two model APIs. */
  protocol: WireProtocol | null;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, undefined when there was none (or it was not JSON). */
  readonly body: unknown;
  /** Set for model requests whose body was valid. */
  view: FakeRequestView | undefined;
  /** Clock reading when the request arrived, before its body was read. */
  receivedAt: number;
  /**
   * Clock readings as each output frame of a streamed answer (a piece of text or of tool arguments)
   * was handed to the socket, in order: when the model "sent" each token.
   */
  outputAt: number[];
  /** Clock reading when the response was fully written; undefined while running or if aborted. */
  finishedAt: number | undefined;
  /** True when the client went away before the response was complete. */
  aborted: boolean;
}

export interface FakeModelServer {
  /** Base URL without a path. OpenAI clients take `${url}/v1` as their base URL; Anthropic clients take `url`. */
  url: string;
  port: number;
  /** Every request in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Replaces the queue and the default turn. */
  setScript(script: Script): void;
  enqueue(...turns: Turn[]): void;
  /** The next `count` embeddings requests fail with `status` (an outage the client must retry through). */
  failEmbeddings(count: number, status?: number): void;
  /** Resolves with the n-th request (1-based) once it has arrived. */
  waitForRequest(n: number, timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

const wallClock = () => performance.timeOrigin + performance.now();

type Route = "anthropic" | "openai" | "models" | "embeddings" | "not_found";

function routeOf(method: string | undefined, path: string): Route {
  if (method === "POST" && path === "/v1/messages") return "anthropic";
  if (method === "POST" && path === "/v1/chat/completions") return "openai";
  if (method === "GET" && path === "/v1/models") return "models";
  if (method === "POST" && path === "/v1/embeddings") return "embeddings";
  return "not_found";
}

/** Anthropic's SDK always sends `anthropic-version`; the shared routes answer in the caller's dialect. */
function dialectOf(headers: IncomingHttpHeaders): WireProtocol {
  return headers["anthropic-version"] !== undefined ? "anthropic" : "openai";
}

function errorBody(protocol: WireProtocol, type: string, message: string) {
  return protocol === "anthropic" ? anthropicErrorBody(type, message) : openaiErrorBody(type, message);
}

export async function startFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const clock = options.clock ?? wallClock;
  const models = options.models ?? ["fake-model"];
  const requests: RecordedRequest[] = [];
  const waiters = new Set<{
    n: number;
    resolve: (request: RecordedRequest) => void;
    reject: (e: Error) => void;
  }>();
  let queue: Turn[] = [];
  let defaultTurn: DefaultTurn = OK_TURN;
  let embeddingFailures = { count: 0, status: 503 };
  const anthropicCache = new AnthropicPromptCache(clock, options.promptCache);
  const openaiCache = new OpenAIPromptCache(clock);

  function setScript(script: Script): void {
    queue = [...(script.turns ?? [])];
    defaultTurn = script.defaultTurn ?? OK_TURN;
  }
  setScript(options.script ?? {});

  function record(request: RecordedRequest): void {
    requests.push(request);
    for (const waiter of waiters) {
      if (requests.length >= waiter.n) waiter.resolve(requests[waiter.n - 1] as RecordedRequest);
    }
  }

  async function answer(
    protocol: WireProtocol,
    view: FakeRequestView,
    recorded: RecordedRequest,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<void> {
    const scripted = z.safeParse(TurnData, takeTurn(queue, defaultTurn, view));
    if (!scripted.success) {
      const message = `the script's turn is invalid: ${z.prettifyError(scripted.error)}`;
      sendJson(res, 500, errorBody(protocol, "api_error", message));
      return;
    }
    const turn: ResolvedTurn = scripted.data;
    if (!(await pause(turn.delayMs ?? 0, signal))) return;
    const requestId = `req_fake_${recorded.index}`;
    const headers: Record<string, string> = { "request-id": requestId, "x-request-id": requestId };
    let failure: StreamFailure | undefined;
    let reply: SuccessTurn;
    if ("error" in turn) {
      const { status, type, message, retryAfterSeconds } = turn.error;
      if (!view.stream || turn.afterText === undefined) {
        if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds);
        return sendJson(res, status, errorBody(protocol, type, message), headers);
      }
      failure = { type, message };
      reply = { text: turn.afterText, chunkDelayMs: turn.chunkDelayMs };
    } else {
      reply = turn;
    }
    const chunkDelayMs = reply.chunkDelayMs ?? 0;
    const sent = () => recorded.outputAt.push(clock());
    if (protocol === "anthropic") {
      const plan = planReply(reply, view, `toolu_fake_${recorded.index}_`, (tokens) =>
        anthropicCache.use(recorded.body as Record<string, unknown>, tokens),
      );
      const id = `msg_fake_${recorded.index}`;
      if (!view.stream) return sendJson(res, 200, anthropicMessage(plan, view.model, id), headers);
      return streamFrames(
        res,
        anthropicStreamFrames(plan, view.model, id, failure),
        chunkDelayMs,
        signal,
        headers,
        sent,
      );
    }
    const plan = planReply(reply, view, `call_fake_${recorded.index}_`, (tokens) => ({
      ...NO_CACHE_USAGE,
      readTokens: openaiCache.use(recorded.body as Record<string, unknown>, tokens),
    }));
    const identity = {
      id: `chatcmpl-fake-${recorded.index}`,
      model: view.model,
      created: Math.floor(Date.now() / 1000),
    };
    if (!view.stream) return sendJson(res, 200, openaiCompletion(plan, identity), headers);
    const frames = openaiStreamFrames(plan, identity, view.includeUsage, failure);
    return streamFrames(res, frames, chunkDelayMs, signal, headers, sent);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = clock();
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const route = routeOf(req.method, path);
    const protocol = route === "anthropic" || route === "openai" ? route : null;
    const dialect = protocol ?? dialectOf(req.headers);
    const aborter = new AbortController();
    // The body is kept as its bytes and parsed again when read: a benchmark sends thousands of ~70 KB
    // requests, and holding every one parsed made the fake's garbage collection a large share of the
    // machine the platform is measured on.
    let raw: Buffer | undefined;
    let body: unknown;
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method ?? "",
      path,
      protocol,
      headers: req.headers,
      get body() {
        if (raw !== undefined) {
          body = raw.length === 0 ? undefined : JSON.parse(raw.toString("utf8"));
          raw = undefined;
        }
        return body;
      },
      view: undefined,
      receivedAt,
      outputAt: [],
      finishedAt: undefined,
      aborted: false,
    };
    const clientGone = () => {
      recorded.aborted = true;
      aborter.abort();
      res.destroy();
    };
    // An aborting HTTP/1.1 client half-closes its socket; without this the server would only notice
    // on a failed write, up to several chunk delays later.
    const socket = req.socket;
    socket.once("end", clientGone);
    res.once("close", () => {
      socket.off("end", clientGone);
      if (res.writableFinished) recorded.finishedAt = clock();
      else if (!recorded.aborted) clientGone();
    });

    const read = await readJsonBody(req);
    if (read.ok) raw = read.raw;
    record(recorded);
    if (!read.ok) {
      const type = read.status === 413 ? "request_too_large" : "invalid_request_error";
      return sendJson(res, read.status, errorBody(dialect, type, read.message));
    }
    switch (route) {
      case "models": {
        const body =
          dialect === "anthropic"
            ? anthropicModels(models)
            : openaiModels(models, Math.floor(Date.now() / 1000));
        return sendJson(res, 200, body);
      }
      case "embeddings": {
        if (embeddingFailures.count > 0) {
          embeddingFailures = { ...embeddingFailures, count: embeddingFailures.count - 1 };
          return sendJson(
            res,
            embeddingFailures.status,
            openaiErrorBody("api_error", "the fake model's embeddings are failing on purpose"),
          );
        }
        const parsed = EmbeddingsRequest.safeParse(read.body);
        if (!parsed.success) {
          const message = z.prettifyError(parsed.error);
          return sendJson(res, 400, openaiErrorBody("invalid_request_error", message));
        }
        return sendJson(res, 200, embeddingsBody(parsed.data));
      }
      case "not_found":
        return sendJson(
          res,
          404,
          errorBody(dialect, "not_found_error", `no route for ${req.method} ${path}`),
        );
      case "anthropic":
      case "openai": {
        const bodyOf = () => recorded.body;
        const parsed =
          route === "anthropic"
            ? viewAnthropicRequest(read.body, bodyOf)
            : viewOpenAIRequest(read.body, bodyOf);
        if (!parsed.ok) return sendJson(res, 400, errorBody(route, "invalid_request_error", parsed.message));
        recorded.view = parsed.view;
        return answer(route, parsed.view, recorded, res, aborter.signal);
      }
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in the fake must surface in the test that hit it, not vanish.
      if (!res.headersSent) sendJson(res, 500, openaiErrorBody("api_error", String(error)));
      else res.destroy(error instanceof Error ? error : undefined);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    requests,
    setScript,
    enqueue(...turns) {
      queue.push(...turns);
    },
    failEmbeddings(count, status = 503) {
      embeddingFailures = { count, status };
    },
    waitForRequest(n, timeoutMs = 5_000) {
      const arrived = requests[n - 1];
      if (arrived) return Promise.resolve(arrived);
      return new Promise((resolve, reject) => {
        const settle = (done: () => void) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          done();
        };
        const waiter = {
          n,
          resolve: (request: RecordedRequest) => settle(() => resolve(request)),
          reject: (error: Error) => settle(() => reject(error)),
        };
        const timer = setTimeout(
          () => waiter.reject(new Error(`fake model: request #${n} did not arrive within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.add(waiter);
      });
    },
    close() {
      for (const waiter of waiters) waiter.reject(new Error("fake model: server closed"));
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
