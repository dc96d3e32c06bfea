import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type JetStreamManager, streamNamePrefix } from "@wakeloop/bus";
import {
  BoundPorts,
  type ContainerRuntimeClient,
  GenericContainer,
  getContainerRuntimeClient,
  ImageName,
  RandomPortGenerator,
  Wait,
} from "testcontainers";

const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

/** The shared test NATS (`WL_TEST_NATS_URL`; test tooling may read the environment, packages may not). */
export function testNatsUrl(): string {
  return process.env.WL_TEST_NATS_URL ?? DEFAULT_NATS_URL;
}

/** A subject prefix no other test file uses, so files can share one NATS side by side. */
export function testPrefix(): string {
  return `t${randomBytes(5).toString("hex")}`;
}

/** Deletes the streams of `prefix` (and with them their consumers), and nothing else. */
export async function cleanupPrefix(jsm: JetStreamManager, prefix: string): Promise<void> {
  const own = `${streamNamePrefix(prefix)}_`;
  const names: string[] = [];
  for await (const name of jsm.streams.names()) if (name.startsWith(own)) names.push(name);
  await Promise.all(names.map((name) => jsm.streams.delete(name)));
}

export interface NatsServer {
  url: string;
  port: number;
  /** Stops the server and removes its container, store included. */
  stop(): Promise<void>;
  /**
   * Stops the server (SIGTERM unless told otherwise), stays down `downMs`, then starts the same container
   * again on the same host port with the same store, as an operator's restart would.
   */
  restart(options?: { downMs?: number; signal?: NodeJS.Signals }): Promise<void>;
}

/** The image infra/nats-image.sh builds: the nats-server series the shared NATS runs. */
export const NATS_IMAGE = "wakeloop-nats:2.9";
/**
 * Each container of startNatsServer carries it, valued with its host port, so one a killed test run left
 * behind can be found (`docker ps -a --filter label=wakeloop.test.nats`).
 */
export const NATS_CONTAINER_LABEL = "wakeloop.test.nats";

const SETUP = "bash infra/docker-engine.sh && bash infra/nats-image.sh";
const READY = "Server is ready";
// A JetStream server recovering its store starts in about a second; under a full CI run on two cores a
// restart has been seen to take over 10 s before it logs that it serves.
const STARTUP_MS = 30_000;

async function requireNatsImage(): Promise<ContainerRuntimeClient> {
  let client: ContainerRuntimeClient;
  try {
    client = await getContainerRuntimeClient();
  } catch (cause) {
    throw new Error(`Docker is not reachable. Start it and build the NATS image with: ${SETUP}`, { cause });
  }
  // Checked here because testcontainers would otherwise try to pull it, and nothing can be pulled.
  if (!(await client.image.exists(ImageName.fromString(NATS_IMAGE)))) {
    throw new Error(`The image ${NATS_IMAGE} is missing. Build it with: ${SETUP}`);
  }
  return client;
}

/**
 * A private NATS JetStream server in a container (testcontainers), for tests that break the server:
 * restart it, take it away. Never the shared one: other test files rely on that staying up.
 */
export async function startNatsServer(): Promise<NatsServer> {
  const client = await requireNatsImage();
  // Fixed, because Docker maps a fresh random host port each time a container starts again.
  const port = await new RandomPortGenerator().generatePort();
  const container = await new GenericContainer(NATS_IMAGE)
    .withCommand(["-js", "-sd", "/data", "-p", "4222"])
    .withExposedPorts({ container: 4222, host: port })
    .withLabels({ [NATS_CONTAINER_LABEL]: String(port) })
    // The image has no shell for the default port check; the server's own log says when it serves.
    .withWaitStrategy(Wait.forLogMessage(READY))
    .withStartupTimeout(STARTUP_MS)
    // No Ryuk reaper: its image would have to be pulled. stop() removes the container instead.
    .withAutoCleanup(false)
    .start();
  const docker = client.container.getById(container.getId());

  return {
    url: `nats://${container.getHost()}:${port}`,
    port,
    async stop() {
      await container.stop({ remove: true, removeVolumes: true });
    },
    async restart({ downMs = 0, signal = "SIGTERM" } = {}) {
      // testcontainers' own restart() is `docker restart`: neither a chosen signal nor a time down.
      await docker.kill({ signal });
      await docker.wait();
      await sleep(downMs);
      await client.container.start(docker);
      const { State } = await client.container.inspect(docker);
      // Only log lines of this start count: the earlier runs' lines stay in the container's log.
      await Wait.forLogMessage(READY)
        .withStartupTimeout(STARTUP_MS)
        .waitUntilReady(docker, new BoundPorts(), new Date(State.StartedAt));
    },
  };
}
