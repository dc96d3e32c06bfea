/** One sample of a Prometheus text exposition: `name{label="value",…} value`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** What a service's `GET /metrics` answered, parsed into its samples. */
export class PromScrape {
  constructor(
    readonly text: string,
    readonly samples: PromSample[],
  ) {}

  /** The metric family names with at least one sample (`_bucket`/`_count`/`_sum` fold into their histogram). */
  families(): Set<string> {
    return new Set(this.samples.map((sample) => sample.name.replace(/_(bucket|count|sum)$/, "")));
  }

  /** Samples of `name` whose labels include every one of `labels`. */
  find(name: string, labels: Record<string, string> = {}): PromSample[] {
    return this.samples.filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  }

  /** The sum of the values of `find(name, labels)`; 0 when none matches. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.find(name, labels).reduce((total, sample) => total + sample.value, 0);
  }
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (version 0.0.4); a line it cannot read is an error, not skipped. */
export function parsePrometheusText(text: string): PromScrape {
  const samples: PromSample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const [, name = "", body = "", value = ""] = match;
    const labels: Record<string, string> = {};
    for (const [, key = "", raw = ""] of body.matchAll(LABEL))
      labels[key] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name, labels, value: Number(value.replace("+Inf", "Infinity")) });
  }
  return new PromScrape(text, samples);
}

/** GETs a `/metrics` endpoint and parses what it answered. */
export async function scrapeMetrics(url: string): Promise<PromScrape> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  return parsePrometheusText(await response.text());
}
