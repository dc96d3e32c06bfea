import type { Agent, CreateAgentRequest, SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";

// The README's demo: an agent on the local fake model, one session, its event stream printed as a user
// of the API sees it. The agent saves a note with set_state (which needs the user's approval), then
// calls `deploy`, a custom tool this client fulfils, and answers.

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
};
const client = createClient({ baseUrl: env("WAKELOOP_URL"), apiKey: env("WAKELOOP_API_KEY") });

const spec = {
  name: "demo-assistant",
  model: { provider: "openai_compatible", id: "fake-model", base_url: env("FAKE_MODEL_URL") },
  system: "You are a careful release assistant.",
  tools: [
    { type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] },
    {
      type: "custom",
      name: "deploy",
      description: "Deploy the current build to a target environment",
      input_schema: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
    },
  ],
} satisfies CreateAgentRequest;

/** The demo agent an earlier run made, so each run reuses it instead of adding another. */
async function findDemoAgent(): Promise<Agent | undefined> {
  let after: string | undefined;
  do {
    const page = await client.agents.list({ limit: 100, after_id: after });
    const found = page.data.find((agent) => agent.name === spec.name);
    if (found !== undefined) return found;
    after = page.next_after_id ?? undefined;
  } while (after !== undefined);
  return undefined;
}

// An update with the same spec returns the latest version unchanged; a changed one (another fake-model
// port, say) becomes the next version.
const existing = await findDemoAgent();
const agent =
  existing === undefined ? await client.agents.create(spec) : await client.agents.update(existing.id, spec);
const session = await client.sessions.create({ agent: agent.id, title: "demo" });
console.log(`agent ${agent.id} v${agent.version}, session ${session.id}\n`);

const stop = new AbortController();
const show = (event: SessionEvent): string => {
  switch (event.type) {
    case "user.message":
    case "agent.message":
      return event.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
    case "agent.tool_use":
      return `${event.name}(${JSON.stringify(event.input)}) permission=${event.evaluated_permission}`;
    case "agent.custom_tool_use":
      return `${event.name}(${JSON.stringify(event.input)}) → for the client`;
    case "agent.tool_result":
      return `${event.is_error ? "error: " : ""}${event.content.map((block) => (block.type === "text" ? block.text : "")).join("")}`;
    case "session.status_idle":
      return `stop_reason=${event.stop_reason.type}`;
    case "session.usage":
      return `tokens in=${event.usage.input_tokens} out=${event.usage.output_tokens}`;
    default:
      return "";
  }
};

await client.events.send(session.id, [
  { type: "user.message", content: [{ type: "text", text: "Ship build 42 to staging, please." }] },
]);

for await (const event of client.events.stream(session.id, { signal: stop.signal })) {
  console.log(`#${String(event.seq).padStart(2)} ${event.type.padEnd(26)} ${show(event)}`);
  if (event.type !== "session.status_idle") continue;
  const reason = event.stop_reason;
  if (reason.type !== "requires_action") break;
  for (const pending of (await client.sessions.pending(session.id)).data) {
    if (pending.kind === "tool_confirmation") {
      console.log(`   → approving ${pending.name} (a person would decide here)`);
      await client.events.send(session.id, [
        { type: "user.tool_confirmation", tool_use_id: pending.event_id, result: "allow" },
      ]);
    } else {
      console.log(`   → running ${pending.name} on the client and returning its result`);
      await client.events.send(session.id, [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: pending.event_id,
          content: [{ type: "text", text: "deployed build 42 to staging" }],
        },
      ]);
    }
  }
}
stop.abort();
const finished = await client.sessions.get(session.id);
console.log(
  `\nsession ${finished.status}, stop reason ${finished.stop_reason?.type}, usage ${JSON.stringify(finished.usage)}`,
);
