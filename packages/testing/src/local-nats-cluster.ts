import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { freePort, type NatsServerProcess, spawnNatsServer } from "./local-nats-server";

/** A JetStream cluster of nats-server processes on this machine, for tests that kill and restart nodes. */
export interface LocalNatsCluster {
  /** Every node's client URL, comma-separated: the seed list a service's NATS_URL takes. */
  url: string;
  names: string[];
  /** Kills a node with SIGKILL, as a crash would; its JetStream store stays for its restart. */
  kill(name: string): Promise<void>;
  /** Starts a killed node again on the same ports and store; resolves once it is ready. */
  start(name: string): Promise<void>;
  /** The name of the node leading `stream` (asked of any live node). */
  streamLeader(stream: string): Promise<string>;
  log(name: string): string;
  /** Kills every node and removes their stores. */
  stop(): Promise<void>;
}

interface Node {
  name: string;
  clientPort: number;
  configPath: string;
  process: NatsServerProcess | null;
}

const LEADER_WAIT_MS = 30_000;

/**
 * `size` nats-server processes (the Debian package, 2.9) routed to each other as one JetStream cluster,
 * each with its own ports and store in a temp directory; resolves once the cluster has a JetStream
 * leader, so streams can be created with `size` replicas.
 */
export async function startLocalNatsCluster(size = 3): Promise<LocalNatsCluster> {
  const dir = await mkdtemp(join(tmpdir(), "wl-nats-cluster-"));
  const ports = await Promise.all(
    Array.from({ length: size }, async () => [await freePort(), await freePort()]),
  );
  const routes = ports.map(([, cluster]) => `nats-route://127.0.0.1:${cluster}`);
  const nodes: Node[] = [];
  for (const [index, [clientPort, clusterPort]] of ports.entries()) {
    const name = `n${index + 1}`;
    const configPath = join(dir, `${name}.conf`);
    await writeFile(
      configPath,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${clientPort}`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, name))} }`,
        `cluster { name: wl-test, listen: 127.0.0.1:${clusterPort}, routes: [${routes.join(", ")}] }`,
      ].join("\n"),
    );
    nodes.push({ name, clientPort: clientPort as number, configPath, process: null });
  }
  const node = (name: string): Node => {
    const found = nodes.find((candidate) => candidate.name === name);
    if (found === undefined) throw new Error(`no node ${name}`);
    return found;
  };
  const url = nodes.map((n) => `nats://127.0.0.1:${n.clientPort}`).join(",");
  const live = () => nodes.filter((n) => n.process !== null).map((n) => `nats://127.0.0.1:${n.clientPort}`);

  const start = async (name: string) => {
    const n = node(name);
    n.process = spawnNatsServer(n.configPath);
    await n.process.ready;
  };
  const kill = async (name: string) => {
    const n = node(name);
    await n.process?.kill();
    n.process = null;
  };
  const stop = async () => {
    for (const n of nodes) await kill(n.name);
    await rm(dir, { recursive: true, force: true });
  };

  /** Asks a live node through a short-lived connection; JetStream answers once a meta leader exists. */
  const ask = async <T>(question: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>) => {
    const deadline = Date.now() + LEADER_WAIT_MS;
    for (;;) {
      const nc = await connect({ servers: live(), timeout: 2_000 }).catch(() => null);
      try {
        if (nc !== null) return await question(await jetstreamManager(nc, { timeout: 2_000 }));
      } catch (error) {
        if (Date.now() > deadline) throw error;
      } finally {
        await nc?.close();
      }
      if (Date.now() > deadline) throw new Error("the NATS cluster did not answer");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  try {
    await Promise.all(nodes.map((n) => start(n.name)));
    // A meta leader answers account info before every peer can hold a replica: a stream of `size`
    // replicas made and removed proves the cluster takes the platform's streams.
    await ask(async (jsm) => {
      const name = `WL_CLUSTER_PROBE_${process.pid}`;
      await jsm.streams.add({ name, subjects: [`wl-cluster-probe.${process.pid}`], num_replicas: size });
      await jsm.streams.delete(name);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    names: nodes.map((n) => n.name),
    kill,
    start,
    async streamLeader(stream) {
      return ask(async (jsm) => {
        const leader = (await jsm.streams.info(stream)).cluster?.leader;
        if (leader === undefined) throw new Error(`stream ${stream} has no leader yet`);
        return leader;
      });
    },
    log: (name) => node(name).process?.output() ?? "",
    stop,
  };
}
