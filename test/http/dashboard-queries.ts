/** The queries of docs/grafana-dashboard.json, and the metric names they use. */
import { readFileSync } from "node:fs";

interface Panel {
  targets?: { expr: string }[];
  panels?: Panel[];
}

const dashboard = JSON.parse(
  readFileSync(new URL("../../../docs/grafana-dashboard.json", import.meta.url), "utf8"),
) as { panels: Panel[]; templating: { list: { query: { query: string } }[] } };

/** Every PromQL expression of the dashboard: panel targets and template variable queries. */
export function dashboardQueries(): string[] {
  const out: string[] = [];
  const walk = (panels: Panel[]): void => {
    for (const p of panels) {
      for (const t of p.targets ?? []) out.push(t.expr);
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  return out;
}

export function templateQueries(): string[] {
  return dashboard.templating.list.map((v) => v.query.query);
}

/** A dashboard query as Prometheus itself would run it: Grafana's variables replaced. */
export function asPromQL(expr: string): string {
  return expr.replaceAll("$__rate_interval", "1m").replaceAll("$topic", ".*");
}

/** The metric names a query reads (conch_*, nodejs_*, process_*). */
export function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b((?:conch|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}
