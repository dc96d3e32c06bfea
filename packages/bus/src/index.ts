export type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg, PubAck } from "@nats-io/jetstream";
export type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
export {
  type Catalog,
  type CatalogEntry,
  type CatalogOptions,
  type ConsumerSpec,
  createCatalog,
  eventTypeConsumers,
  type ParsedOf,
  type PayloadOf,
  type StreamSpec,
  type SubjectArgsOf,
  WAKE_CONSUMER,
  withConsumer,
} from "./catalog";
export { type Bus, type ConnectBusOptions, connectBus, type NatsCredentials } from "./connect";
export {
  type ConsumeBatchHandler,
  type ConsumeBatchOptions,
  type ConsumeContext,
  type ConsumeHandler,
  type ConsumeOptions,
  consume,
  consumeBatches,
} from "./consume";
export {
  type ControlSubscription,
  publishControl,
  type SubscribeControlOptions,
  subscribeControl,
} from "./control";
export { DeadLetter, DeadLetterReason } from "./dead-letter";
export { type DeltaSubscription, publishDelta, type SubscribeDeltasOptions, subscribeDeltas } from "./deltas";
export { ensureConsumer, ensureStream, ensureStreams, removeConsumer } from "./ensure-streams";
export { asWakeloopError, fromBusError } from "./errors";
export { LagHistogram, type LagSnapshot } from "./lag-histogram";
export {
  createOutboxRelay,
  OUTBOX_CHANNEL,
  type OutboxRelay,
  type OutboxRelayOptions,
  type OutboxRelayStats,
} from "./outbox-relay";
export { type PublishOptions, publish } from "./publish";
export {
  type ActionContract,
  type ActionContracts,
  defineService,
  type RequestOptions,
  request,
  type ServeOptions,
  type ServiceCallContext,
  type ServiceContract,
  type ServiceHandle,
  type ServiceHandlers,
  serve,
} from "./service";
export { DEFAULT_PREFIX, type EvtSubject, type Subjects, streamNamePrefix, subjects } from "./subjects";
export { extractTraceContext, injectTraceContext } from "./trace-context";
export { publishWakeJob, type WakeJobToPublish, wakeJobMsgId } from "./wake-jobs";
