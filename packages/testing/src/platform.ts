import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { connectBus } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { type FakeModelServer, type Script, startFakeModelServer } from "@wakeloop/fake-model";
import type Docker from "dockerode";
import { sql } from "kysely";
import { AppProcess, defaultRunMode, entryArgs, type RunMode } from "./app-process";
import { createTestDatabase, type TestDatabase } from "./database";
import { labelledContainers, removeLabelled, requireDocker } from "./docker";
import { cleanupPrefix, testNatsUrl, testPrefix } from "./nats";
import { type PromScrape, scrapeMetrics } from "./prometheus";
import { sandboxWorkspaces, unmountSandboxWorkspaces } from "./sandbox-workspaces";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const READY_TIMEOUT_MS = 60_000;
// The labels the sandbox-runner puts on everything it creates (apps/sandbox-runner/src/labels.ts).
const RUNNER_LABEL = "wakeloop.runner";
const SESSION_LABEL = "wakeloop.session";
const WORKSPACE = "/workspace";

/** This platform's own runner: its id labels its containers, so `stop` removes exactly those. */
interface SandboxRunner {
  docker: Docker;
  id: string;
  stateDir: string;
}

export interface PlatformOptions {
  /** Harness workers, each its own process (default 2). */
  workers?: number;
  /**
   * Start the sandbox-runner (needs the Docker engine and the sandbox image) with its own runner id and
   * state directory; `stop` removes its containers and volumes.
   */
  sandbox?: boolean;
  /** Extra environment for every app. */
  env?: Record<string, string>;
  /** NATS servers the apps use (a comma-separated seed list, e.g. a LocalNatsCluster's), instead of the shared test NATS. */
  natsUrl?: string;
  /** Extra environment for the harness workers. */
  workerEnv?: Record<string, string>;
  /** Extra environment for one app, by its name (`gateway`, `harness-worker`, …), e.g. its own credentials. */
  appEnv?: Partial<Record<string, Record<string, string>>>;
  script?: Script;
  /** memory-retrieval embeds events and memory with the fake model server's `/v1/embeddings` (hybrid search). */
  embeddings?: boolean;
  /** Run the apps and the tenant CLI from source (tsx) or compiled (`npm run build`); see RunMode. */
  run?: RunMode;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies of every shape
  body: any;
  headers: Headers;
}

/**
 * The whole platform for end-to-end tests and benchmarks: a fresh database, a subject prefix, the fake
 * model server in this process, and every app as its own process (two harness workers by default).
 */
export class Platform {
  readonly apps = new Map<string, AppProcess>();
  apiKey = "";
  tenantId = "";
  baseUrl = "";
  /** Seals tenants' provider credentials; the same for every app of this platform. */
  readonly credentialKey = `e2e:${randomBytes(32).toString("base64")}`;

  private constructor(
    readonly database: TestDatabase,
    readonly prefix: string,
    readonly fake: FakeModelServer,
    private readonly options: PlatformOptions,
    private readonly runner: SandboxRunner | null,
  ) {}

  static async start(options: PlatformOptions = {}): Promise<Platform> {
    const runner: SandboxRunner | null = options.sandbox
      ? {
          docker: await requireDocker(),
          id: `e2e${randomBytes(5).toString("hex")}`,
          stateDir: await mkdtemp(join(tmpdir(), "wl-e2e-sandbox-")),
        }
      : null;
    const database = await createTestDatabase();
    const fake = await startFakeModelServer(options.script ? { script: options.script } : {});
    const platform = new Platform(database, testPrefix(), fake, options, runner);
    try {
      await platform.boot();
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  get db() {
    return this.database.db;
  }

  get natsUrl(): string {
    return this.options.natsUrl ?? testNatsUrl();
  }

  private get run(): RunMode {
    return this.options.run ?? defaultRunMode();
  }

  /** The model configuration of an agent that talks to this platform's fake model server. */
  fakeModel(provider: "openai_compatible" | "anthropic" = "openai_compatible") {
    return provider === "anthropic"
      ? { provider, id: "fake-claude", base_url: this.fake.url }
      : { provider, id: "fake-gpt", base_url: `${this.fake.url}/v1` };
  }

  /** An agent that talks to this platform's fake model (`spec` sets or overrides any field); its id. */
  async createAgent(spec: Record<string, unknown> = {}): Promise<string> {
    const created = await this.request("POST", "/v1/agents", {
      name: "e2e",
      model: this.fakeModel(),
      system: "You are a test agent.",
      ...spec,
    });
    if (created.status !== 200) throw new Error(`agent: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body.id as string;
  }

  private env(app: string, extra: Record<string, string> = {}): Record<string, string> {
    return {
      // Services connect as the role row security binds; the tenant CLI and the tests use the owner.
      DATABASE_URL: this.database.appUrl,
      AGENT_SQL_DATABASE_URL: this.database.agentSqlUrl,
      NATS_URL: this.natsUrl,
      // The shared test NATS has no auth; a test on an authenticating one passes credentials (appEnv).
      NATS_ALLOW_ANONYMOUS: "true",
      WL_SUBJECT_PREFIX: this.prefix,
      HEALTH_PORT: "0",
      METRICS_PORT: "0",
      PORT: "0",
      LOG_LEVEL: "info",
      ANTHROPIC_API_KEY: "fake-key",
      OPENAI_API_KEY: "fake-key",
      // The fake model listens on 127.0.0.1: reaching it, and sending it the platform's keys, is an
      // operator decision the platform's tests make here, explicitly.
      EGRESS_ALLOWED_HOSTS: "127.0.0.1",
      MODEL_BASE_URL_ALLOWED_HOSTS: "127.0.0.1",
      PROVIDER_CREDENTIAL_KEYS: this.credentialKey,
      SANDBOX_ENABLED: this.options.sandbox ? "true" : "false",
      ...(app === "memory-retrieval" &&
        this.options.embeddings && {
          EMBEDDINGS_BASE_URL: `${this.fake.url}/v1`,
          EMBEDDINGS_MODEL: "fake-embed",
          EMBEDDINGS_POLL_MS: "50",
        }),
      ...this.options.env,
      ...this.options.appEnv?.[app],
      ...extra,
    };
  }

  /** A tenant and its first owner key, made with the operators' command. */
  async createTenant(name: string): Promise<{ tenantId: string; apiKey: string }> {
    const cli = entryArgs("apps/gateway/src/cli/create-tenant.ts", this.run, ROOT);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [...cli, "--name", name, "--json", "--database-url", this.database.url],
      { cwd: ROOT },
    );
    const created = JSON.parse(stdout) as { tenant: { id: string }; owner_key: { key: string } };
    return { tenantId: created.tenant.id, apiKey: created.owner_key.key };
  }

  private async boot(): Promise<void> {
    const tenant = await this.createTenant("e2e");
    this.tenantId = tenant.tenantId;
    this.apiKey = tenant.apiKey;

    for (const name of ["orchestrator", "gateway", "memory-retrieval"])
      this.apps.set(name, new AppProcess(name, this.env(name), { cwd: ROOT, run: this.run }));
    if (this.runner) {
      const env = this.env("sandbox-runner", {
        SANDBOX_RUNNER_ID: this.runner.id,
        SANDBOX_STATE_DIR: this.runner.stateDir,
      });
      this.apps.set("sandbox-runner", new AppProcess("sandbox-runner", env, { cwd: ROOT, run: this.run }));
    }
    for (let index = 1; index <= (this.options.workers ?? 2); index++) this.spawnWorker(`worker-${index}`);
    await Promise.all([...this.apps.values()].map((app) => app.record("ready", READY_TIMEOUT_MS)));
    const listening = await this.app("gateway").record("API listening", READY_TIMEOUT_MS);
    this.baseUrl = `http://127.0.0.1:${String(listening.port)}`;
  }

  /** Starts a killed service again with the same settings; resolves once it is ready. */
  async restartApp(name: "orchestrator" | "memory-retrieval"): Promise<AppProcess> {
    const app = new AppProcess(name, this.env(name), { cwd: ROOT, run: this.run });
    this.apps.set(name, app);
    await app.record("ready", READY_TIMEOUT_MS);
    return app;
  }

  /** Starts a harness worker under `name` (also its WORKER_ID); resolves once it is ready. */
  startWorker(name: string): Promise<AppProcess> {
    const worker = this.spawnWorker(name);
    return worker.record("ready", READY_TIMEOUT_MS).then(() => worker);
  }

  /**
   * Starts a harness worker without waiting for it: boot waits for every app at once, and a second,
   * unawaited wait on a worker that fails to start would be an unhandled rejection, ending the test
   * process before `stop` drops the database.
   */
  private spawnWorker(name: string): AppProcess {
    const worker = new AppProcess(
      "harness-worker",
      this.env("harness-worker", { WORKER_ID: name, ...this.options.workerEnv }),
      { cwd: ROOT, run: this.run },
    );
    this.apps.set(name, worker);
    return worker;
  }

  /** Starts one more orchestrator replica under `name`; resolves once it is ready. */
  startOrchestrator(name: string): Promise<AppProcess> {
    const replica = new AppProcess("orchestrator", this.env("orchestrator"), { cwd: ROOT, run: this.run });
    this.apps.set(name, replica);
    return replica.record("ready", READY_TIMEOUT_MS).then(() => replica);
  }

  /** The containers, running or not, that this platform's runner made for the session. */
  sandboxContainers(sessionId: string): Promise<Docker.ContainerInfo[]> {
    return labelledContainers(this.sandboxDocker(), this.sandboxLabels(sessionId));
  }

  /** The workspace mounted at /workspace in the session's container (its name), or null. */
  async sandboxWorkspace(sessionId: string): Promise<string | null> {
    for (const info of await this.sandboxContainers(sessionId)) {
      const mount = info.Mounts.find((m) => m.Destination === WORKSPACE && m.Type === "bind");
      if (mount) return basename(mount.Source);
    }
    return null;
  }

  /** The workspaces (images or mount points) this platform's runner holds on the host. */
  sandboxWorkspaces(): Promise<string[]> {
    if (!this.runner) throw new Error("this platform was started without a sandbox-runner");
    return sandboxWorkspaces(this.runner.stateDir);
  }

  private sandboxDocker(): Docker {
    if (!this.runner) throw new Error("this platform was started without a sandbox-runner");
    return this.runner.docker;
  }

  private sandboxLabels(sessionId: string): Record<string, string> {
    return { [RUNNER_LABEL]: this.runner?.id ?? "", [SESSION_LABEL]: sessionId };
  }

  app(name: string): AppProcess {
    const app = this.apps.get(name);
    if (!app) throw new Error(`no app ${name}`);
    return app;
  }

  /** The name of the harness worker running the session's open wake (to kill it mid-wake). */
  async wakeWorker(sessionId: string): Promise<string> {
    const wake = await this.db
      .selectFrom("wakes")
      .select(["worker_id"])
      .where("session_id", "=", sessionId)
      .where("status", "=", "running")
      .executeTakeFirstOrThrow();
    return wake.worker_id ?? "";
  }

  /** Scrapes the `GET /metrics` endpoint of one app (by name, or a worker's name), on the port it logged. */
  async metrics(name: string): Promise<PromScrape> {
    const ready = await this.app(name).record("ready", READY_TIMEOUT_MS);
    return scrapeMetrics(`http://127.0.0.1:${String(ready.metrics_port)}/metrics`);
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        ...(body !== undefined && { "content-type": "application/json" }),
        ...headers,
      },
      ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  /** POSTs a create body (agent, environment, session…) and returns the new id; throws unless 200. */
  async create(path: string, body: Record<string, unknown>): Promise<string> {
    const created = await this.request("POST", path, body);
    if (created.status !== 200) throw new Error(`${path}: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body.id as string;
  }

  /** Appends client events to a session; throws unless the gateway accepts them (202). */
  async send(sessionId: string, ...events: unknown[]): Promise<void> {
    const sent = await this.request("POST", `/v1/sessions/${sessionId}/events`, { events });
    if (sent.status !== 202) throw new Error(`events: ${sent.status} ${JSON.stringify(sent.body)}`);
  }

  /** Sends client events, waits for the session to go idle with `stop`, and returns the events since. */
  async turn(
    sessionId: string,
    events: unknown[],
    stop = "end_turn",
    timeoutMs = 60_000,
  ): Promise<SessionEvent[]> {
    const before = (await this.events(sessionId)).at(-1)?.seq ?? 0;
    await this.send(sessionId, ...events);
    await this.waitForIdle(sessionId, stop, before, timeoutMs);
    return (await this.events(sessionId)).filter((event) => event.seq > before);
  }

  /**
   * Where `secret` shows up in what the platform keeps (events, the ledger, spans) or logged (every
   * app's records and stderr): what a vault value must never reach. Empty when it is nowhere.
   */
  async secretFoundIn(secret: string): Promise<string[]> {
    const like = `%${secret}%`;
    const { rows } = await sql<{ events: number; ledger: number; spans: number }>`
      SELECT (SELECT count(*) FROM session_events WHERE body::text LIKE ${like}) AS events,
             (SELECT count(*) FROM tool_calls WHERE input::text LIKE ${like} OR result::text LIKE ${like}) AS ledger,
             (SELECT count(*) FROM spans WHERE attributes::text LIKE ${like} OR events::text LIKE ${like}) AS spans`.execute(
      this.db,
    );
    const found = Object.entries(rows[0] ?? {})
      .filter(([, count]) => Number(count) > 0)
      .map(([table]) => table);
    for (const [name, app] of this.apps) {
      if (JSON.stringify(app.records).includes(secret) || app.stderr.includes(secret))
        found.push(`${name} logs`);
    }
    return found;
  }

  async events(sessionId: string): Promise<SessionEvent[]> {
    const all: SessionEvent[] = [];
    for (let after = 0; ; ) {
      const page = await this.request(
        "GET",
        `/v1/sessions/${sessionId}/events?after_seq=${after}&limit=1000`,
      );
      if (page.status !== 200) throw new Error(`events: ${page.status} ${JSON.stringify(page.body)}`);
      all.push(...page.body.data);
      if (page.body.next_after_seq === null) return all;
      after = page.body.next_after_seq;
    }
  }

  /** Polls the session's events until `predicate` holds for one of them, and returns that event. */
  async waitForEvent(
    sessionId: string,
    predicate: (event: SessionEvent, all: SessionEvent[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<SessionEvent> {
    const deadline = Date.now() + timeoutMs;
    let last: SessionEvent[] = [];
    while (Date.now() < deadline) {
      last = await this.events(sessionId);
      const found = last.find((event) => predicate(event, last));
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(
      `timed out waiting for an event; events so far: ${JSON.stringify(last.map((e) => [e.seq, e.type]))}`,
    );
  }

  /**
   * A new session of `agentId` told `text`, once its turn has ended (idle for any reason): its id and
   * every event. Throws when the session cannot be created or the message is refused.
   */
  async runTurn(agentId: string, text = "hello"): Promise<{ id: string; events: SessionEvent[] }> {
    const created = await this.request("POST", "/v1/sessions", { agent: agentId });
    if (created.status !== 200) throw new Error(`session: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.id as string;
    const sent = await this.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text }] }],
    });
    if (sent.status !== 202) throw new Error(`message: ${sent.status} ${JSON.stringify(sent.body)}`);
    await this.waitForEvent(id, (event) => event.type === "session.status_idle", 60_000);
    return { id, events: await this.events(id) };
  }

  /** Waits until the session is idle with a stop reason of `type` and no open wake. */
  waitForIdle(sessionId: string, type: string, afterSeq = 0, timeoutMs = 30_000): Promise<SessionEvent> {
    return this.waitForEvent(
      sessionId,
      (event) =>
        event.seq > afterSeq && event.type === "session.status_idle" && event.stop_reason.type === type,
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    for (const app of this.apps.values()) app.kill("SIGTERM");
    await Promise.all(
      [...this.apps.values()].map((app) => app.exitCode(15_000).catch(() => app.kill("SIGKILL"))),
    );
    await this.fake.close();
    if (this.runner) {
      // Session containers outlive a runner's shutdown by design (adopted at its next start).
      await removeLabelled(this.runner.docker, { [RUNNER_LABEL]: this.runner.id });
      await unmountSandboxWorkspaces(this.runner.stateDir);
      await rm(this.runner.stateDir, { recursive: true, force: true });
    }
    const bus = await connectBus({ servers: this.natsUrl.split(","), name: "platform-cleanup" });
    try {
      await cleanupPrefix(bus.jsm, this.prefix);
    } finally {
      await bus.close();
    }
    await this.database.drop();
  }
}
