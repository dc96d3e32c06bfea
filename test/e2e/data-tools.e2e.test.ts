import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The model and data tools through the services: db_sql / db_schema on the agent's own Postgres
// schema (through the worker's agent SQL runner role) across two wakes, and llm_generate answered by
// the fake model with its tokens counted as the session's usage. Each test makes its own agent.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const created = await platform.request("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function send(sessionId: string, text: string): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;

/** The tool results of a session after `afterSeq`, parsed from their JSON text. */
async function results(sessionId: string, afterSeq = 0): Promise<{ isError: boolean; value: unknown }[]> {
  return (await platform.events(sessionId))
    .filter((event): event is ToolResult => event.type === "agent.tool_result" && event.seq > afterSeq)
    .map((event) => {
      const text = event.content.map((block) => ("text" in block ? block.text : "")).join("");
      return { isError: event.is_error, value: event.is_error ? text : JSON.parse(text) };
    });
}

describe("data tools", () => {
  it("an agent creates a table in one wake and queries it in the next", async () => {
    const agent = await create("/v1/agents", { name: "data", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const tools = await platform.request("GET", `/v1/sessions/${id}/tools`);
    const offered = (tools.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["db_sql", "db_schema", "llm_generate"]));

    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "db_sql", input: { sql: "CREATE TABLE books (title text PRIMARY KEY, year int)" } },
        ],
      },
      {
        toolCalls: [
          {
            name: "db_sql",
            input: { sql: "INSERT INTO books VALUES (?, ?), (?, ?)", params: ["Dune", 1965, "Emma", 1815] },
          },
        ],
      },
      { toolCalls: [{ name: "db_sql", input: { sql: "SELECT * FROM sessions" } }] },
      { text: "Stored." },
    );
    await send(id, "keep a list of books");
    const first = await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const written = await results(id);
    expect(written.slice(0, 2)).toEqual([
      { isError: false, value: { command: "CREATE", changes: 0 } },
      { isError: false, value: { command: "INSERT", changes: 2 } },
    ]);
    // The platform's tables are out of reach: a clear error result, and the wake goes on.
    expect(written[2]).toMatchObject({
      isError: true,
      value: expect.stringMatching(/relation "sessions" does not exist|permission denied/),
    });

    platform.fake.enqueue(
      {
        toolCalls: [
          {
            name: "db_sql",
            input: { sql: "SELECT title FROM books WHERE year > ? ORDER BY title", params: [1900] },
          },
          { name: "db_schema", input: {} },
        ],
      },
      { text: "Dune." },
    );
    await send(id, "which books are modern?");
    await platform.waitForIdle(id, "end_turn", first.seq, 60_000);
    expect(await results(id, first.seq)).toEqual([
      { isError: false, value: { columns: ["title"], rows: [["Dune"]], row_count: 1, truncated: false } },
      {
        isError: false,
        value: {
          tables: [
            {
              name: "books",
              columns: [
                { name: "title", type: "text", notnull: true, pk: true },
                { name: "year", type: "integer", notnull: false, pk: false },
              ],
              row_count: 2,
            },
          ],
        },
      },
    ]);
  });

  it("llm_generate is answered by the model and its tokens count as the session's usage", async () => {
    const agent = await create("/v1/agents", { name: "llm", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [{ name: "llm_generate", input: { prompt: "Classify: I love it", system: "One word." } }],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { text: "positive", usage: { input_tokens: 7, output_tokens: 2 } },
      { text: "It is positive.", usage: { input_tokens: 120, output_tokens: 5 } },
    );
    await send(id, "classify my review");
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    expect(await results(id)).toEqual([
      {
        isError: false,
        value: {
          text: "positive",
          model: "fake-gpt",
          intelligence: "low",
          usage: { input_tokens: 7, output_tokens: 2 },
        },
      },
    ]);
    // The generate request carried no tools and no history: just its system prompt and prompt.
    const body = platform.fake.requests[before + 1]?.body as {
      messages: Array<{ role: string; content: unknown }>;
      tools?: unknown[];
    };
    expect(body.messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(body.tools ?? []).toEqual([]);
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    expect(session.body).toMatchObject({ usage: { input_tokens: 227, output_tokens: 17 } });
    // The generate call is a GenAI chat span under the tool's span, with its own token counts.
    type Span = { name: string; attributes: Record<string, unknown>; children: Span[] };
    let tool: Span | undefined;
    await expect
      .poll(
        async () => {
          const trace = await platform.request("GET", `/v1/sessions/${id}/trace`);
          const root = trace.body.data?.[0]?.spans?.[0] as Span | undefined;
          tool = root?.children.find((child) => child.name === "execute_tool llm_generate");
          return tool?.children.map((child) => child.name);
        },
        { timeout: 10_000 },
      )
      .toEqual(["chat fake-gpt"]);
    expect(tool?.children[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.usage.input_tokens": 7,
      "gen_ai.usage.output_tokens": 2,
    });
  });

  it("llm_generate with a schema returns the parsed answer, and refuses one that does not match", async () => {
    const agent = await create("/v1/agents", { name: "llm schema", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const schema = {
      type: "object",
      properties: { label: { enum: ["positive", "negative"] } },
      required: ["label"],
    };
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      { toolCalls: [{ name: "llm_generate", input: { prompt: "I love it", schema, intelligence: "high" } }] },
      { text: '```json\n{"label": "positive"}\n```' },
      { toolCalls: [{ name: "llm_generate", input: { prompt: "Meh", schema } }] },
      { text: '{"label": "neutral"}' },
      { text: "Done." },
    );
    await send(id, "classify two reviews");
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const [good, bad] = await results(id);
    expect(good).toMatchObject({
      isError: false,
      value: { parsed: { label: "positive" }, intelligence: "high" },
    });
    expect(bad).toMatchObject({
      isError: true,
      value: expect.stringMatching(/does not match the schema: answer.label/),
    });
    const body = platform.fake.requests[before + 1]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(JSON.stringify(body.messages[0]?.content)).toContain("matches this JSON Schema");
  });

  it("llm_generate's tokens count against the budget before the next model request", async () => {
    const agent = await create("/v1/agents", {
      name: "llm budget",
      model: platform.fakeModel(),
      budget: { max_total_tokens: 150 },
    });
    const id = await create("/v1/sessions", { agent });
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [{ name: "llm_generate", input: { prompt: "Summarize a long text" } }],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { text: "A summary.", usage: { input_tokens: 40, output_tokens: 20 } },
    );
    await send(id, "summarize");
    await platform.waitForIdle(id, "budget_reached", 0, 60_000);
    // The wake's request and the generate call, and no third request past the budget.
    expect(platform.fake.requests.length - before).toBe(2);
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    expect(session.body).toMatchObject({ usage: { input_tokens: 140, output_tokens: 30 } });
  });
});
