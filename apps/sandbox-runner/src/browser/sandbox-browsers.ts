import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { type Browser, type CDPSession, chromium, type Page } from "playwright-core";
import { BROWSER_USER, execPipe } from "../container-exec";
import { sessionKey } from "../labels";
import type { RunnerLog } from "../runner-log";
import { type ChromiumEndpoint, startChromium, stopChromium } from "./chromium-process";
import { devtoolsGuard, withoutCompressionOffer } from "./devtools-guard";

/** The viewport every page gets, and so the size of a viewport screenshot. */
export const VIEWPORT = { width: 1280, height: 720 } as const;
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * One TCP connection inside the container, to the DevTools port on its loopback, spoken over the
 * exec's stdin and stdout (the container's node; no shell, the port is an argument).
 */
const RELAY =
  'const s=require("net").connect(Number(process.argv[1]),"127.0.0.1");' +
  "process.stdin.pipe(s);s.pipe(process.stdout);" +
  's.on("error",()=>process.exit(1));s.on("close",()=>process.exit(0));';

/** A session's browser as its tools use it. */
export interface SessionBrowser {
  /** The session's one page, starting Chromium in its sandbox on first use. */
  page(): Promise<Page>;
  /** Stops a script or a load running in the page (an interrupt). */
  interrupt(): Promise<void>;
  /** Closes the session's browser; true when one was open. */
  close(): Promise<boolean>;
}

type Held = {
  containerId: string;
  browser: Browser;
  page: Page;
  /** Opened with the page, not at interrupt time: a page stuck in a script may not answer an attach. */
  cdp: CDPSession;
  server: net.Server;
};

/**
 * The Chromium of each session's sandbox, driven by Playwright here in the runner. Playwright needs
 * Node 20 and the sandbox image has Debian's Node 18, so the driver stays outside and speaks CDP to
 * the browser inside: Playwright connects to a Unix socket in a private directory of the runner
 * (mode 0700), and every connection to it is piped by `docker exec` into the container to Chromium's
 * DevTools port on the container's own loopback. No port is published and no network is needed: a
 * sandbox without network still browses its own loopback, and one with its fenced network reaches
 * only what the fence lets through, because every page request is made by Chromium inside. What
 * comes back is bounded (devtools-guard.ts) before Playwright parses it.
 */
export class SandboxBrowsers {
  private readonly held = new Map<string, Promise<Held>>();
  private readonly socketDir = mkdtempSync(join(tmpdir(), "wl-browser-"));

  constructor(
    private readonly docker: Docker,
    private readonly log: RunnerLog,
  ) {}

  /** The browser handle of one session, on the container the session holds at each call. */
  of(sessionId: string, containerId: () => string | null): SessionBrowser {
    return {
      page: async () => {
        const id = containerId();
        if (id === null) throw new WakeloopError("sandbox_not_ready", "the sandbox has no container");
        return (await this.open(sessionId, id)).page;
      },
      interrupt: () => this.interrupt(sessionId),
      close: async () => {
        const id = containerId();
        const hadConnection = await this.forget(sessionId);
        const stopped = id === null ? false : await stopChromium(this.docker.getContainer(id));
        return hadConnection || stopped;
      },
    };
  }

  /** Drops the session's connection (its container is going away or went away); true when there was one. */
  async forget(sessionId: string): Promise<boolean> {
    const entry = this.held.get(sessionId);
    if (entry === undefined) return false;
    this.held.delete(sessionId);
    const held = await entry.catch(() => null);
    if (held === null) return false;
    await dispose(held);
    return true;
  }

  /** Drops every connection (the runner stops; the browsers keep running in their containers). */
  async stop(): Promise<void> {
    await Promise.all([...this.held.keys()].map((sessionId) => this.forget(sessionId)));
    rmSync(this.socketDir, { recursive: true, force: true });
  }

  private async open(sessionId: string, containerId: string): Promise<Held> {
    const entry = this.held.get(sessionId);
    if (entry !== undefined) {
      const held = await entry.catch(() => null);
      if (
        held !== null &&
        held.containerId === containerId &&
        held.browser.isConnected() &&
        !held.page.isClosed()
      ) {
        return held;
      }
      if (this.held.get(sessionId) === entry) await this.forget(sessionId);
    }
    const opening = this.connect(sessionId, containerId);
    this.held.set(sessionId, opening);
    opening.catch(() => {
      if (this.held.get(sessionId) === opening) this.held.delete(sessionId);
    });
    return opening;
  }

  private async connect(sessionId: string, containerId: string): Promise<Held> {
    const container = this.docker.getContainer(containerId);
    const endpoint = await startChromium(container);
    const socketPath = join(this.socketDir, `${sessionKey(sessionId)}.sock`);
    const server = await this.bridge(container, endpoint, socketPath);
    try {
      const browser = await chromium.connectOverCDP(`ws+unix:${socketPath}:${endpoint.path}`, {
        timeout: CONNECT_TIMEOUT_MS,
      });
      const context = browser.contexts()[0] ?? (await browser.newContext());
      const page = context.pages()[0] ?? (await context.newPage());
      await page.setViewportSize(VIEWPORT);
      const cdp = await context.newCDPSession(page);
      const held: Held = { containerId, browser, page, cdp, server };
      browser.on("disconnected", () => {
        server.close();
        void this.held.get(sessionId)?.then((current) => {
          if (current === held) this.held.delete(sessionId);
        });
      });
      this.log.info({ sessionId, containerId, chromiumPid: endpoint.pid }, "browser connected");
      return held;
    } catch (error) {
      server.close();
      throw new WakeloopError(
        "browser_unavailable",
        `could not connect to the browser in the sandbox: ${(error as Error).message.split("\n")[0]}`,
        { cause: error },
      );
    }
  }

  /** A Unix socket whose every connection is piped into the container to Chromium's DevTools port. */
  private async bridge(
    container: Docker.Container,
    endpoint: ChromiumEndpoint,
    socketPath: string,
  ): Promise<net.Server> {
    rmSync(socketPath, { force: true });
    const server = net.createServer((socket) => {
      execPipe(container, ["node", "-e", RELAY, String(endpoint.port)], { as: BROWSER_USER }).then(
        ({ input, output }) => {
          const guard = devtoolsGuard();
          const request = withoutCompressionOffer();
          socket.pipe(request).pipe(input);
          output.pipe(guard).pipe(socket);
          const end = () => {
            socket.destroy();
            input.destroy();
          };
          output.on("end", end);
          output.on("error", end);
          request.on("error", end);
          guard.on("error", (error) => {
            this.log.warn({ err: error, containerId: container.id }, "browser connection cut at a bound");
            end();
          });
          input.on("error", end);
          socket.on("error", end);
          socket.on("close", end);
        },
        (error: Error) => {
          this.log.warn({ err: error, containerId: container.id }, "browser relay could not start");
          socket.destroy();
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, resolve);
    });
    return server;
  }

  private async interrupt(sessionId: string): Promise<void> {
    const held = await this.held.get(sessionId)?.catch(() => null);
    if (!held || held.page.isClosed()) return;
    await Promise.allSettled([
      held.cdp.send("Runtime.terminateExecution"),
      held.cdp.send("Page.stopLoading"),
    ]);
  }
}

async function dispose(held: Held): Promise<void> {
  held.server.close();
  await held.browser.close().catch(() => undefined);
}
