import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  AuthorizationError,
  connect,
  createInbox,
  type MsgHdrs,
  type NatsConnection,
} from "@nats-io/transport-node";
import { type ControlMessage, type StreamDelta, WakeloopError } from "@wakeloop/contracts";
import type { z } from "zod";
import {
  type Catalog,
  type CatalogEntry,
  type CatalogOptions,
  createCatalog,
  type ParsedOf,
} from "./catalog";
import {
  type ConsumeBatchHandler,
  type ConsumeBatchOptions,
  type ConsumeHandler,
  type ConsumeOptions,
  consume,
  consumeBatches,
} from "./consume";
import {
  type ControlSubscription,
  publishControl,
  type SubscribeControlOptions,
  subscribeControl,
} from "./control";
import { type DeltaSubscription, publishDelta, type SubscribeDeltasOptions, subscribeDeltas } from "./deltas";
import { type PublishOptions, publish } from "./publish";
import {
  type ActionContracts,
  type RequestOptions,
  request,
  type ServeOptions,
  type ServiceContract,
  type ServiceHandle,
  type ServiceHandlers,
  serve,
} from "./service";
import { DEFAULT_PREFIX, type Subjects, subjects as subjectsFor } from "./subjects";

export interface ConnectBusOptions {
  servers: string | string[];
  /** Subject and stream prefix; tests use a unique one each. */
  prefix?: string;
  /** Shown by the server's monitoring, e.g. `harness-worker-3`. */
  name: string;
  catalog?: CatalogOptions;
  /** How long the first connection attempt may take before start-up fails. */
  connectTimeoutMs?: number;
  /** This service's own NATS user; the server limits what it may publish and subscribe to. */
  credentials?: NatsCredentials;
}

export interface NatsCredentials {
  user: string;
  password: string;
}

/** A connection plus every bus operation bound to its prefix and catalog. */
export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  catalog: Catalog;
  /** A new inbox subject under this connection's own prefix, the only one its user may subscribe to. */
  inbox(): string;
  publish<E extends CatalogEntry>(
    entry: E,
    subjectArgs: Parameters<E["subject"]>,
    payload: z.input<E["schema"]>,
    options: PublishOptions,
  ): ReturnType<typeof publish>;
  consume<E extends CatalogEntry>(
    entry: E,
    handler: ConsumeHandler<ParsedOf<E>>,
    options?: ConsumeOptions,
  ): Promise<void>;
  consumeBatches<E extends CatalogEntry>(
    entry: E,
    handler: ConsumeBatchHandler<ParsedOf<E>>,
    options?: ConsumeBatchOptions,
  ): Promise<void>;
  serve<A extends ActionContracts>(
    contract: ServiceContract<A>,
    handlers: ServiceHandlers<A>,
    options?: ServeOptions,
  ): ServiceHandle;
  request<A extends ActionContracts, K extends keyof A & string>(
    contract: ServiceContract<A>,
    action: K,
    body: z.input<A[K]["request"]>,
    options?: RequestOptions,
  ): Promise<z.output<A[K]["response"]>>;
  publishControl(message: ControlMessage): void;
  subscribeControl(
    session: string,
    handler: (message: ControlMessage, headers: MsgHdrs | undefined) => void | Promise<void>,
    options?: SubscribeControlOptions,
  ): ControlSubscription;
  /** Fire and forget; see deltas.ts. */
  publishDelta(tenant: string, delta: StreamDelta): void;
  subscribeDeltas(
    tenant: string,
    session: string,
    handler: (delta: StreamDelta) => void,
    options?: SubscribeDeltasOptions,
  ): DeltaSubscription;
  /** Flushes what is pending and closes; consumers and services should be stopped first. */
  close(): Promise<void>;
}

/**
 * Connects once (failing start-up with `bus_unreachable` when no server answers), then reconnects
 * forever: a NATS outage must degrade the platform, never end the process.
 */
export async function connectBus(options: ConnectBusOptions): Promise<Bus> {
  const subjects = subjectsFor(options.prefix ?? DEFAULT_PREFIX);
  const inboxPrefix = options.credentials && `_INBOX_${options.credentials.user}`;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: options.servers,
      name: options.name,
      timeout: options.connectTimeoutMs ?? 5_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      // The client otherwise builds two errors (stack traces) for every request and JetStream publish
      // in case it fails: ~2 % of the orchestrator's CPU, relaying each event. Our errors say which
      // call failed without the caller's stack.
      noAsyncTraces: true,
      // Replies come to an inbox prefix of this user's own, which its permissions can then be limited to.
      ...(options.credentials && {
        user: options.credentials.user,
        pass: options.credentials.password,
        inboxPrefix,
      }),
    });
  } catch (err) {
    // Wrong or missing credentials are a deployment mistake: retrying with the same ones cannot help.
    if (err instanceof AuthorizationError)
      throw new WakeloopError(
        "bus_auth_failed",
        `NATS at ${String(options.servers)} refused this service's credentials`,
        {
          cause: err,
        },
      );
    throw new WakeloopError("bus_unreachable", `cannot reach NATS at ${String(options.servers)}`, {
      cause: err,
      retryable: true,
    });
  }
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (err) {
    await nc.close();
    throw new WakeloopError(
      "bus_jetstream_unavailable",
      "the NATS server does not offer JetStream (start it with -js)",
      {
        cause: err,
      },
    );
  }
  const js = jetstream(nc);
  const catalog = createCatalog(subjects, options.catalog);
  return {
    nc,
    js,
    jsm,
    subjects,
    catalog,
    inbox: () => createInbox(inboxPrefix),
    publish: (entry, subjectArgs, payload, publishOptions) =>
      publish(js, entry, subjectArgs, payload, publishOptions),
    consume: (entry, handler, consumeOptions) =>
      consume({ js, deadLetters: catalog.deadLetters }, entry, handler, consumeOptions),
    consumeBatches: (entry, handler, consumeOptions) =>
      consumeBatches({ js, deadLetters: catalog.deadLetters }, entry, handler, consumeOptions),
    serve: (contract, handlers, serveOptions) => serve(nc, subjects, contract, handlers, serveOptions),
    request: (contract, action, body, requestOptions) =>
      request(nc, subjects, contract, action, body, requestOptions),
    publishControl: (message) => publishControl(nc, subjects, message),
    subscribeControl: (session, handler, subscribeOptions) =>
      subscribeControl(nc, subjects, session, handler, subscribeOptions),
    publishDelta: (tenant, delta) => publishDelta(nc, subjects, tenant, delta),
    subscribeDeltas: (tenant, session, handler, subscribeOptions) =>
      subscribeDeltas(nc, subjects, tenant, session, handler, subscribeOptions),
    async close() {
      if (nc.isClosed()) return;
      await nc.drain().catch(() => nc.close());
    },
  };
}
