import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { subjects, WAKE_CONSUMER } from "@wakeloop/bus";
import { GatewayEnv } from "@wakeloop/gateway/config";
import { HarnessWorkerEnv } from "@wakeloop/harness-worker/config";
import { MemoryRetrievalEnv } from "@wakeloop/memory-retrieval/config";
import { OrchestratorEnv } from "@wakeloop/orchestrator/config";
import { SandboxRunnerEnv } from "@wakeloop/sandbox-runner/config";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Namespace, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";
import { composeValidator, readYaml } from "./compose-schema";

// infra/k8s, checked offline: every object against the Kubernetes API's OpenAPI schemas (and KEDA's
// CRD schema for the ScaledObject) through kubernetes-models, then against the code it deploys: each
// service's settings are ones its config.ts knows, probes reach the health server on the port that
// setting names, disruption budgets and the autoscaler select what exists, the autoscaler watches the
// wake queue's real stream and consumer. Then the Compose multi-node profile. The schemas allow unknown fields (as the API server does
// unless asked for strict field validation), which the cross-checks below partly make up for.

const K8S = join(import.meta.dirname, "..", "..", "infra", "k8s");

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  // biome-ignore lint/suspicious/noExplicitAny: a manifest is read as YAML; the schemas check its shape.
  spec?: any;
  data?: Record<string, string>;
}

const MODELS: Record<string, { new (data: never): { validate(): void } }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
};

/** Each service's settings schema: the names its config.ts reads. */
const SETTINGS: Record<string, z.ZodObject> = {
  gateway: GatewayEnv,
  orchestrator: OrchestratorEnv,
  "harness-worker": HarnessWorkerEnv,
  "sandbox-runner": SandboxRunnerEnv,
  "memory-retrieval": MemoryRetrievalEnv,
};

async function manifests(): Promise<{ file: string; manifest: Manifest }[]> {
  const files = (await readdir(K8S)).filter(
    (file) => file.endsWith(".yaml") && file !== "kustomization.yaml",
  );
  const all = [];
  for (const file of files.sort()) {
    for (const document of parseAllDocuments(await readFile(join(K8S, file), "utf8"))) {
      expect(document.errors, file).toEqual([]);
      all.push({ file, manifest: document.toJSON() as Manifest });
    }
  }
  return all;
}

function workloads(all: { manifest: Manifest }[]): Manifest[] {
  return all
    .map(({ manifest }) => manifest)
    .filter((m) => m.kind === "Deployment" || m.kind === "StatefulSet");
}

describe("infra/k8s", () => {
  it("is valid by the Kubernetes API schemas, every object of it", async () => {
    const all = await manifests();
    expect(all.length).toBeGreaterThan(10);
    for (const { file, manifest } of all) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(
        Model,
        `${file}: ${manifest.apiVersion} ${manifest.kind} is not a kind this test knows`,
      ).toBeDefined();
      expect(
        () => new (Model as NonNullable<typeof Model>)(manifest as never).validate(),
        file,
      ).not.toThrow();
    }
    // The schemas do reject a wrong shape, so a pass means something.
    const [gateway] = workloads(all).filter((m) => m.metadata.name === "gateway");
    const broken = structuredClone(gateway) as Manifest;
    broken.spec.replicas = "two";
    expect(() => new Deployment(broken as never).validate()).toThrow(/replicas must be integer/);
  });

  it("lists every file in the kustomization", async () => {
    const kustomization = parse(await readFile(join(K8S, "kustomization.yaml"), "utf8")) as {
      resources: string[];
      images: { name: string }[];
    };
    const files = (await readdir(K8S)).filter(
      (file) => file.endsWith(".yaml") && file !== "kustomization.yaml",
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    const images = workloads(await manifests()).flatMap((w) =>
      (w.spec.template.spec.containers as { image: string }[]).map((c) => c.image),
    );
    for (const image of images.filter((name) => name.startsWith("wakeloop-"))) {
      expect(kustomization.images.map((entry) => entry.name)).toContain(image);
    }
  });

  it("deploys every service with settings its config knows, probes on its health port and a disruption budget", async () => {
    const all = await manifests();
    const config = all.find(({ manifest }) => manifest.kind === "ConfigMap")?.manifest.data ?? {};
    const budgets = all.map(({ manifest }) => manifest).filter((m) => m.kind === "PodDisruptionBudget");
    const deployed = workloads(all);
    expect(deployed.map((w) => w.metadata.name).sort()).toEqual(Object.keys(SETTINGS).sort());

    for (const workload of deployed) {
      const name = workload.metadata.name;
      const known = Object.keys((SETTINGS[name] as z.ZodObject).shape);
      const container = workload.spec.template.spec.containers.find((c: { name: string }) => c.name === name);
      const env = Object.fromEntries(
        (container.env as { name: string; value?: string }[]).map((entry) => [entry.name, entry.value]),
      );
      for (const setting of [...Object.keys(config), ...Object.keys(env)]) {
        expect(known, `${name} is given ${setting}, which its config.ts does not read`).toContain(setting);
      }
      const ports = Object.fromEntries(
        (container.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p.containerPort]),
      );
      expect(String(ports.health), name).toBe(env.HEALTH_PORT ?? config.HEALTH_PORT);
      expect(String(ports.metrics), name).toBe(env.METRICS_PORT ?? config.METRICS_PORT);
      expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
      expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
      expect(container.resources.requests).toBeDefined();
      // The kill grace period leaves room for the service's own shutdown bound.
      const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? config.SHUTDOWN_TIMEOUT_MS);
      expect(workload.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(shutdownMs);

      const labels = workload.spec.template.metadata.labels as Record<string, string>;
      expect(workload.spec.selector.matchLabels).toEqual(labels);
      const budget = budgets.find((b) => b.metadata.name === name);
      expect(budget?.spec.selector.matchLabels, `${name} has a PodDisruptionBudget`).toEqual(labels);
    }
  });

  it("scales the workers on the wake queue's own stream and consumer", async () => {
    const all = await manifests();
    const scaled = all.map(({ manifest }) => manifest).find((m) => m.kind === "ScaledObject");
    const config = all.find(({ manifest }) => manifest.kind === "ConfigMap")?.manifest.data ?? {};
    expect(scaled?.spec.scaleTargetRef.name).toBe("harness-worker");
    const [trigger] = scaled?.spec.triggers ?? [];
    expect(trigger.type).toBe("nats-jetstream");
    expect(trigger.metadata.stream).toBe(subjects(config.WL_SUBJECT_PREFIX).stream("wakes"));
    expect(trigger.metadata.consumer).toBe(WAKE_CONSUMER);
    // Never below two: a rolling restart or a drained node always leaves a worker.
    expect(scaled?.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
  });
});

describe("docker-compose.multinode.yml", () => {
  interface ComposeService {
    command?: string[];
    environment?: Record<string, string>;
    extends?: { file: string; service: string };
  }
  type Compose = { services: Record<string, ComposeService> };

  it("is a valid Compose file by the Compose specification's JSON schema", async () => {
    const validate = await composeValidator();
    const profile = await readYaml<Compose>("docker-compose.multinode.yml");
    expect(validate(profile), JSON.stringify(validate.errors)).toBe(true);
  });

  it("clusters three NATS servers and gives every service all of them, with two runners and two workers", async () => {
    const base = await readYaml<Compose>("docker-compose.yml");
    const profile = await readYaml<
      Compose & { services: { "harness-worker": { deploy: { replicas: number } } } }
    >("docker-compose.multinode.yml");
    const natsServers = Object.keys({ ...base.services, ...profile.services }).filter((name) =>
      /^nats(-\d)?$/.test(name),
    );
    expect(natsServers.sort()).toEqual(["nats", "nats-2", "nats-3"]);

    const names = new Set<string>();
    for (const server of natsServers) {
      const command = profile.services[server]?.command ?? [];
      names.add(command[command.indexOf("--server_name") + 1] ?? "");
      const routes = (command[command.indexOf("--routes") + 1] ?? "").split(",");
      expect(routes.map((route) => new URL(route).hostname).sort(), server).toEqual(natsServers.sort());
      const extended = profile.services[server]?.extends;
      if (extended !== undefined) expect(base.services[extended.service], server).toBeDefined();
    }
    expect(names.size, "every NATS server has a name of its own").toBe(3);

    const apps = [
      "gateway",
      "orchestrator",
      "harness-worker",
      "memory-retrieval",
      "sandbox-runner",
      "sandbox-runner-2",
    ];
    for (const app of apps) {
      const seeds = (profile.services[app]?.environment?.NATS_URL ?? "").split(",");
      expect(seeds.map((seed) => new URL(seed).hostname).sort(), app).toEqual(natsServers.sort());
    }
    const runners = ["sandbox-runner", "sandbox-runner-2"].map(
      (name) => profile.services[name]?.environment ?? {},
    );
    expect(new Set(runners.map((env) => env.SANDBOX_RUNNER_ID)).size).toBe(2);
    const stateDirs = runners.map(
      (env) => env.SANDBOX_STATE_DIR ?? base.services["sandbox-runner"]?.environment?.SANDBOX_STATE_DIR,
    );
    expect(new Set(stateDirs).size, "each runner keeps its own state").toBe(2);
    expect(profile.services["harness-worker"].deploy.replicas).toBeGreaterThanOrEqual(2);
  });
});
