import { Platform } from "@wakeloop/testing";
import { benchScript } from "./session-bench";
import { now } from "./stats";

const platform = await Platform.start({ workers: 1, script: benchScript(), workerEnv: { WORKER_SLOTS: "32" } });
try {
  const agent = await platform.request("POST", "/v1/agents", { name: "p", model: platform.fakeModel() });
  const rows: number[][] = [];
  for (let i = 0; i < 40; i++) {
    const id = (await platform.request("POST", "/v1/sessions", { agent: agent.body.id })).body.id as string;
    const seen = platform.fake.requests.length;
    const sent = now();
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [{ type: "user.message", content: [{ type: "text", text: "hi" }] }] });
    const accepted = now();
    const req = await platform.fake.waitForRequest(seen + 1, 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const ev = await platform.db.selectFrom("session_events").select(["type", "created_at"]).where("session_id", "=", id).orderBy("seq").execute();
    const wake = await platform.db.selectFrom("wakes").select(["created_at", "started_at"]).where("session_id", "=", id).executeTakeFirstOrThrow();
    const t = (d: Date | null | undefined) => (d ? d.getTime() : Number.NaN);
    const msg = t(ev.find((e) => e.type === "user.message")?.created_at);
    rows.push([
      accepted - sent,
      t(wake.created_at) - msg,
      t(wake.started_at) - t(wake.created_at),
      t(ev.find((e) => e.type === "session.status_running")?.created_at) - t(wake.started_at),
      t(ev.find((e) => e.type === "span.model_request_start")?.created_at) - t(ev.find((e) => e.type === "session.status_running")?.created_at),
      req.receivedAt - t(ev.find((e) => e.type === "span.model_request_start")?.created_at),
      req.receivedAt - accepted,
    ]);
  }
  const med = (k: number) => rows.map((r) => r[k] ?? 0).sort((a, b) => a - b)[Math.floor(rows.length / 2)];
  console.log(["http+commit", "msg→wake opened", "opened→lease", "lease→running", "running→reqstart", "reqstart→received", "accepted→received"].map((n, k) => `${n}: ${med(k)?.toFixed(2)}`).join("\n"));
} finally {
  await platform.stop();
}
