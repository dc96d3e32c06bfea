import {
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  RequestError,
  type Subscription,
  TimeoutError,
} from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { BusError, exceedsJsonDepth, jsonDepthMessage, WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";
import { asWakeloopError, fromBusError } from "./errors";
import { encodeJson, invalidPayload, messageHeaders } from "./publish";
import type { Subjects } from "./subjects";
import { extractTraceContext } from "./trace-context";

// Request/reply over core NATS subscriptions with a queue group. `@nats-io/services` was not used: its only
// published build (3.0.0-25) pins a pre-release nats-core (3.0.0-50), a second copy beside our 3.4.

export interface ActionContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  request: Req;
  response: Res;
}
export type ActionContracts = Record<string, ActionContract>;

/** A service's actions and their schemas, shared by the server (`serve`) and its clients (`request`). */
export interface ServiceContract<A extends ActionContracts = ActionContracts> {
  name: string;
  actions: A;
}

export function defineService<A extends ActionContracts>(name: string, actions: A): ServiceContract<A> {
  return { name, actions };
}

export interface ServiceCallContext {
  subject: string;
  headers: MsgHdrs | undefined;
}

export type ServiceHandlers<A extends ActionContracts> = {
  [K in keyof A]: (
    request: z.output<A[K]["request"]>,
    ctx: ServiceCallContext,
  ) => Promise<z.input<A[K]["response"]>>;
};

/** The reply envelope: a result, or an error payload (never a stack trace). */
const Reply = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({ ok: z.literal(false), error: BusError }),
]);
type Reply = z.infer<typeof Reply>;

export interface ServeOptions {
  /** Instances in one queue group share the work; default: the service name. */
  queue?: string;
}

export interface ServiceHandle {
  /** Stops taking requests and waits for the ones in flight to be answered. */
  stop(): Promise<void>;
}

/**
 * A message's JSON, refused as `code` when it is not JSON or nests past MAX_JSON_DEPTH: the schema and
 * the handler never walk a value that could run them out of stack.
 */
function decodeJson(data: Uint8Array, code: string, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(data));
  } catch {
    throw new WakeloopError(code, `${what} is not JSON`);
  }
  if (exceedsJsonDepth(value)) throw new WakeloopError(code, jsonDepthMessage(what));
  return value;
}

async function answer(action: ActionContract, handle: ServiceHandlers<ActionContracts>[string], msg: Msg) {
  let reply: Reply;
  try {
    const body = decodeJson(msg.data, "bus_invalid_request", "request body");
    const request = action.request.safeParse(body);
    if (!request.success) throw invalidPayload("request", request.error);
    const result = await handle(request.data, { subject: msg.subject, headers: msg.headers });
    const response = action.response.safeParse(result);
    if (!response.success) throw invalidPayload("response", response.error);
    reply = { ok: true, result: response.data };
  } catch (err) {
    reply = { ok: false, error: asWakeloopError(err).toBusError() };
  }
  msg.respond(encodeJson(reply), { headers: messageHeaders() });
}

export function serve<A extends ActionContracts>(
  nc: NatsConnection,
  subjects: Subjects,
  contract: ServiceContract<A>,
  handlers: ServiceHandlers<A>,
  options: ServeOptions = {},
): ServiceHandle {
  const inflight = new Set<Promise<void>>();
  const subscriptions: Subscription[] = [];
  const byName = handlers as ServiceHandlers<ActionContracts>;
  for (const [name, action] of Object.entries(contract.actions)) {
    const handle = byName[name];
    if (!handle) throw new WakeloopError("bus_missing_handler", `${contract.name}.${name} has no handler`);
    subscriptions.push(
      nc.subscribe(subjects.svc(contract.name, name), {
        queue: options.queue ?? contract.name,
        callback: (_err, msg) => {
          const task: Promise<void> = context
            .with(extractTraceContext(msg.headers), () => answer(action, handle, msg))
            .catch(() => undefined) // the requester times out; nothing else can be told
            .finally(() => inflight.delete(task));
          inflight.add(task);
        },
      }),
    );
  }
  return {
    async stop() {
      await Promise.all(subscriptions.map((sub) => sub.drain()));
      await Promise.all(inflight);
    },
  };
}

export interface RequestOptions {
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export async function request<A extends ActionContracts, K extends keyof A & string>(
  nc: NatsConnection,
  subjects: Subjects,
  contract: ServiceContract<A>,
  action: K,
  body: z.input<A[K]["request"]>,
  options: RequestOptions = {},
): Promise<z.output<A[K]["response"]>> {
  const schemas = contract.actions[action];
  if (!schemas) throw new WakeloopError("bus_unknown_action", `${contract.name} has no action ${action}`);
  const parsed = schemas.request.safeParse(body);
  if (!parsed.success) throw invalidPayload(`${contract.name}.${action} request`, parsed.error);
  const subject = subjects.svc(contract.name, action);
  let msg: Msg;
  try {
    msg = await nc.request(subject, encodeJson(parsed.data), {
      timeout: options.timeoutMs ?? 10_000,
      headers: messageHeaders(options.headers),
    });
  } catch (err) {
    if (err instanceof TimeoutError) {
      throw new WakeloopError("bus_request_timeout", `${subject} did not answer in time`, {
        cause: err,
        retryable: true,
      });
    }
    if (err instanceof RequestError && err.isNoResponders()) {
      throw new WakeloopError("bus_no_responders", `no ${contract.name} service is listening on ${subject}`, {
        cause: err,
        retryable: true,
      });
    }
    throw new WakeloopError("bus_request_failed", `request to ${subject} failed`, {
      cause: err,
      retryable: true,
    });
  }
  let reply: Reply;
  try {
    reply = Reply.parse(decodeJson(msg.data, "bus_invalid_reply", "the reply"));
  } catch (err) {
    throw new WakeloopError("bus_invalid_reply", `${subject} sent a malformed reply`, { cause: err });
  }
  if (!reply.ok) throw fromBusError(reply.error);
  const result = schemas.response.safeParse(reply.result);
  if (!result.success) throw invalidPayload(`${contract.name}.${action} response`, result.error);
  return result.data as z.output<A[K]["response"]>;
}
