import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { parser } from "@prometheus-io/lezer-promql";
import { describe, expect, it } from "vitest";
import { composeValidator, ROOT, readYaml } from "./compose-schema";

// The observability stack's files, checked without pulling an image: docker-compose.yml against the
// Compose specification's JSON schema, the Prometheus config with Debian's promtool, and the Grafana
// provisioning against the compose services, ports and data source uids they name. That the
// dashboard's queries select metrics the services really export is test/e2e/metrics.e2e.test.ts.

const APP_SERVICES = ["gateway", "orchestrator", "harness-worker", "sandbox-runner", "memory-retrieval"];

interface ComposeService {
  environment?: Record<string, string>;
  volumes?: (string | { source: string })[];
}
interface Compose {
  services: Record<string, ComposeService>;
}

/** Whether PromQL `expr` parses, with Grafana's template variables as Prometheus would see them. */
function isPromQL(expr: string): boolean {
  const promql = expr.replaceAll("$__rate_interval", "5m").replaceAll("$__tags", 'job="gateway"');
  let valid = true;
  parser.parse(promql).iterate({
    enter(node) {
      if (node.type.isError) valid = false;
    },
  });
  return valid;
}

describe("docker-compose.yml", () => {
  it("is a valid Compose file by the Compose specification's JSON schema", async () => {
    const validate = await composeValidator();
    const compose = await readYaml<Compose>("docker-compose.yml");

    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    // The schema catches a misspelt key, so a pass means something.
    const misspelt = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
    misspelt.services.grafana = { ...misspelt.services.grafana, portz: ["3000:3000"] };
    expect(validate(misspelt)).toBe(false);
  });

  it("serves every app's /metrics on the port Prometheus scrapes, and mounts the config that exists", async () => {
    const compose = await readYaml<Compose>("docker-compose.yml");
    const prometheus = await readYaml<{
      scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
    }>("infra/prometheus/prometheus.yml");

    expect(prometheus.scrape_configs.map((job) => job.job_name).sort()).toEqual([...APP_SERVICES].sort());
    for (const job of prometheus.scrape_configs) {
      const [target] = job.dns_sd_configs;
      expect(target?.names).toEqual([job.job_name]);
      const environment = compose.services[job.job_name]?.environment ?? {};
      expect(String(target?.port), job.job_name).toBe(environment.METRICS_PORT);
      // Prometheus scrapes from its own container; the default (loopback) would refuse it.
      expect(environment.METRICS_HOST, job.job_name).toBe("0.0.0.0");
      expect(environment.OTEL_METRICS_EXPORTER, job.job_name).toContain("prometheus");
    }
    for (const name of ["prometheus", "grafana"]) {
      const sources = (compose.services[name]?.volumes ?? []).flatMap((volume) =>
        typeof volume === "string" ? [volume.split(":")[0] ?? ""] : [volume.source],
      );
      for (const source of sources.filter((path) => path.startsWith("./")))
        expect(existsSync(join(ROOT, source)), `${name} mounts ${source}`).toBe(true);
    }
  });
});

describe("infra/prometheus/prometheus.yml", () => {
  it("passes promtool check config", async () => {
    const promtool = await promisify(execFile)(
      "promtool",
      ["check", "config", "infra/prometheus/prometheus.yml"],
      {
        cwd: ROOT,
      },
    ).catch((error: NodeJS.ErrnoException & { stdout?: string; stderr?: string }) => {
      if (error.code === "ENOENT")
        throw new Error(
          "promtool is missing: run `bash infra/setup.sh` (installs Debian's prometheus package)",
        );
      throw new Error(`promtool rejected the config:\n${error.stdout}${error.stderr}`);
    });
    expect(promtool.stdout).toContain("SUCCESS");
  });
});

describe("Grafana provisioning", () => {
  interface Datasource {
    uid: string;
    type: string;
    url: string;
    jsonData?: { tracesToMetrics?: { datasourceUid: string; queries: { query: string }[] } };
  }

  it("provides every data source the dashboard uses, and Jaeger spans link to Prometheus", async () => {
    const { datasources } = await readYaml<{ datasources: Datasource[] }>(
      "infra/grafana/provisioning/datasources/datasources.yml",
    );
    const byUid = new Map(datasources.map((source) => [source.uid, source]));
    expect(byUid.get("prometheus")).toMatchObject({ type: "prometheus", url: "http://prometheus:9090" });
    expect(byUid.get("jaeger")).toMatchObject({ type: "jaeger", url: "http://jaeger:16686" });

    const dashboard = await readFile(join(ROOT, "infra/grafana/dashboards/wakeloop.json"), "utf8");
    const used = new Set([...dashboard.matchAll(/"uid": "([^"]+)"/g)].map((match) => match[1]));
    used.delete("wakeloop-overview"); // the dashboard's own uid
    for (const uid of used) expect(byUid.has(uid ?? ""), `data source ${uid}`).toBe(true);

    const links = byUid.get("jaeger")?.jsonData?.tracesToMetrics;
    expect(links?.datasourceUid).toBe("prometheus");
    expect(links?.queries.length).toBeGreaterThan(0);
    for (const { query } of links?.queries ?? []) expect(isPromQL(query), query).toBe(true);
  });

  it("loads the dashboards directory Grafana mounts", async () => {
    const { providers } = await readYaml<{ providers: { options: { path: string } }[] }>(
      "infra/grafana/provisioning/dashboards/dashboards.yml",
    );
    const compose = await readYaml<Compose>("docker-compose.yml");
    expect(compose.services.grafana?.volumes).toContain(
      `./infra/grafana/dashboards:${providers[0]?.options.path}:ro`,
    );
  });
});
