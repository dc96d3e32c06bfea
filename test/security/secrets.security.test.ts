import { randomBytes } from "node:crypto";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8: no log line or span holds an API key or a provider key. The fake providers echo the key
// they were sent back inside their error bodies, the way a misbehaving or hostile upstream does, and
// the services log at debug level: every record, span, event and API answer is then searched.

const token = () => randomBytes(12).toString("hex");
const COMPAT_KEY = `compat-platform-${token()}`;
const ANTHROPIC_KEY = `sk-ant-platform-${token()}`;
const OPENAI_KEY = `sk-platform-${token()}`;

/**
 * A failing upstream that puts the credentials it was sent into its error message (they are the
 * platform's keys; the recorded request headers below show they were indeed sent).
 */
const ECHO_KEYS = {
  error: {
    status: 400,
    type: "invalid_request_error",
    message: `rejected credentials: Bearer ${COMPAT_KEY}, x-api-key ${ANTHROPIC_KEY}`,
  },
};

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    env: { LOG_LEVEL: "debug", OPENAI_COMPATIBLE_KEY_HOSTS: "127.0.0.1" },
    workerEnv: {
      OPENAI_COMPATIBLE_API_KEY: COMPAT_KEY,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      OPENAI_API_KEY: OPENAI_KEY,
    },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function turn(provider: "openai_compatible" | "anthropic"): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", {
    name: provider,
    model: platform.fakeModel(provider),
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  return (await platform.runTurn(agent.body.id)).id;
}

describe("secrets in logs, spans, events and answers", () => {
  it("never shows a provider key or an API key, even when an upstream echoes it back", async () => {
    // A successful turn, then failing turns whose error bodies carry the key each provider was sent.
    const ok = await turn("openai_compatible");
    platform.fake.setScript({ defaultTurn: ECHO_KEYS });
    const compat = await turn("openai_compatible");
    const anthropic = await turn("anthropic");

    // Keys in use on the API: a member key is made, used, revoked and tried again; a forged one fails.
    const member = await platform.request("POST", "/v1/api_keys", { name: "ci", role: "member" });
    expect(member.status).toBe(200);
    const memberKey = member.body.key as string;
    const asMember = { authorization: `Bearer ${memberKey}` };
    expect((await platform.request("GET", "/v1/sessions", undefined, asMember)).status).toBe(200);
    expect((await platform.request("DELETE", `/v1/api_keys/${member.body.id}`)).status).toBeLessThan(300);
    expect((await platform.request("GET", "/v1/sessions", undefined, asMember)).status).toBe(401);
    const forged = `wl_${randomBytes(32).toString("base64url")}`;
    expect(
      (await platform.request("GET", "/v1/agents", undefined, { authorization: `Bearer ${forged}` })).status,
    ).toBe(401);

    // The keys really travelled: the fake providers received each of them.
    const received = JSON.stringify(platform.fake.requests.map((request) => request.headers));
    expect(received).toContain(COMPAT_KEY);
    expect(received).toContain(ANTHROPIC_KEY);

    // Spans reach Postgres after the exporter's batch delay; wait for the failed wakes' spans.
    const deadline = Date.now() + 20_000;
    let spans: unknown[] = [];
    while (Date.now() < deadline) {
      spans = await platform.db.selectFrom("spans").selectAll().execute();
      if (spans.some((span) => JSON.stringify(span).includes(anthropic))) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const events = [
      ...(await platform.events(ok)),
      ...(await platform.events(compat)),
      ...(await platform.events(anthropic)),
    ];
    // Both echoing turns failed; what the sessions were told is the status and our classification.
    const errors = events.flatMap((event) => (event.type === "session.error" ? [event.error.message] : []));
    expect(errors).toEqual([expect.stringMatching(/answered 400/), expect.stringMatching(/answered 400/)]);
    const logs = [...platform.apps.values()].map((app) => JSON.stringify(app.records) + app.stderr);
    const answers = await Promise.all(
      [`/v1/sessions/${compat}/trace`, `/v1/sessions/${anthropic}/pending`, "/v1/api_keys", "/v1/agents"].map(
        (path) => platform.request("GET", path).then((response) => JSON.stringify(response.body)),
      ),
    );

    const haystacks: Record<string, string> = {
      logs: logs.join("\n"),
      spans: JSON.stringify(spans),
      events: JSON.stringify(events),
      answers: answers.join("\n"),
    };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const [name, secret] of Object.entries({
        COMPAT_KEY,
        ANTHROPIC_KEY,
        OPENAI_KEY,
        ownerKey: platform.apiKey,
        memberKey,
        forged,
      })) {
        expect(text.includes(secret), `${name} found in ${where}`).toBe(false);
      }
    }
  }, 180_000);
});
