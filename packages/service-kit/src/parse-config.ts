import type { z } from "zod";

export type Env = Readonly<Record<string, string | undefined>>;

export type ConfigCheck<T> = { ok: true; config: T } | { ok: false; problems: string[] };

/**
 * Parses environment variables through an app's schema. An empty variable counts as unset, so
 * `FOO=` in a compose file falls back to the default instead of failing as an empty URL or port.
 * Problems name the variable, what is wrong, and why the variable exists; never the value, which may
 * be a secret.
 */
export function checkConfig<S extends z.ZodObject>(schema: S, env: Env): ConfigCheck<z.output<S>> {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = schema.safeParse(present);
  if (parsed.success) return { ok: true, config: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const [variable = "(environment)", ...inside] = issue.path.map(String);
    // A path inside the variable points at one entry of a list value, e.g. the 2nd NATS server.
    const where = inside.length === 0 ? "" : `at ${inside.join(".")}: `;
    const reason = schema.shape[variable]?.description;
    return `${variable}: ${where}${issue.message}${reason === undefined ? "" : ` (${reason})`}`;
  });
  return { ok: false, problems };
}

/**
 * The one entry from the environment into an app: each app's `config.ts` calls it with `process.env`.
 * Bad configuration is a deployment mistake no retry fixes, so it lists every problem and exits 1.
 */
export function parseConfig<S extends z.ZodObject>(schema: S, env: Env): z.output<S> {
  const result = checkConfig(schema, env);
  if (result.ok) return result.config;
  process.stderr.write(
    `Invalid configuration; fix these environment variables:\n${result.problems.map((p) => `  ${p}\n`).join("")}`,
  );
  process.exit(1);
}
