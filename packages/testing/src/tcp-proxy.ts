import { createConnection, createServer, type Socket } from "node:net";

export interface TcpProxy {
  /** The port the proxy listens on, on 127.0.0.1. */
  port: number;
  /**
   * The dependency "goes down": open connections are dropped and new ones refused, without touching
   * the shared server behind the proxy.
   */
  cut(): Promise<void>;
  /** The network "blips": open connections are dropped, new ones are accepted as before. */
  drop(): void;
}

/**
 * A TCP proxy to `target`, so a test can take a dependency (Postgres) away from one app while every
 * other test keeps using the real server. `cut` is final; a test that needs the dependency back starts
 * another proxy.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = createConnection(target);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once("error", () => upstream.destroy());
    upstream.once("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  const drop = () => {
    for (const socket of sockets) socket.destroy();
  };
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    drop();
    await closed;
  };
  return { port: address.port, cut, drop };
}
